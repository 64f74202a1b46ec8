// What a CUDA WHILE conditional node costs, by the size of its body.
//
//   nvcc -O2 -arch=sm_90 -o while_node_cost benchmarks/while_node_cost.cu
//   ./while_node_cost [launches]
//
// Session 54's profile (benchmarks/results/2026-12-06-h100-s54/) saw the GPU
// idle ~38 us a step between DSL's first loop_control kernel and the draft
// decode body's first kernel (a 16-layer draft step at 64 rows), where the
// loop's launch had long been issued: a device-side cost of entering the
// WHILE node's body. DeviceWhileLoop (vllm/v1/worker/gpu/conditional_graph.py)
// builds control; WHILE { child graph node (the captured body); control }.
// This program times, per graph launch (CUDA events over back-to-back
// launches, the GPU never waiting for the host once the body is long enough):
//   static   step; (body; step) x I, one plain graph, no conditional;
//   child    control; WHILE { child graph node of body; control }, I iterations;
//   inline   control; WHILE { body's kernels as nodes of the WHILE body; control };
// for bodies of N = 1 ... 512 chained small kernels and I = 1, 2, 4 iterations. child -
// static is what the conditional node costs a launch; its growth with I is
// the per-iteration part, the rest the entry and exit; child against inline
// says whether the nested child graph adds to it. Output: one line per (N, I).
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                    \
  do {                                                           \
    cudaError_t err_ = (x);                                      \
    if (err_ != cudaSuccess) {                                   \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x,  \
              cudaGetErrorString(err_));                         \
      exit(1);                                                   \
    }                                                            \
  } while (0)

__global__ void work(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 0.999f + 1.0f;
}

__global__ void reset(long long* step) { *step = 0; }

// The static graph's stand-in for control: the same step update, no
// condition to set.
__global__ void count(long long* step, const long long* num_steps) {
  if (threadIdx.x == 0) *step = *step + (*num_steps > 0);
}

__global__ void control(cudaGraphConditionalHandle handle, long long* step,
                        const long long* num_steps) {
  if (threadIdx.x == 0) {
    long long next = *step + 1;
    *step = next;
    cudaGraphSetConditional(handle, next < *num_steps ? 1u : 0u);
  }
}

struct Bufs {
  float* x;
  int n;
  long long* step;
  long long* num_steps;
};

static cudaGraphNode_t add_kernel(cudaGraph_t g, cudaGraphNode_t dep, void* fn,
                                  dim3 grid, dim3 block, void** args) {
  cudaKernelNodeParams p = {};
  p.func = fn;
  p.gridDim = grid;
  p.blockDim = block;
  p.kernelParams = args;
  cudaGraphNode_t node;
  CK(cudaGraphAddKernelNode(&node, g, dep ? &dep : nullptr, dep ? 1 : 0, &p));
  return node;
}

// N work kernels chained after dep; returns the last node.
static cudaGraphNode_t add_chain(cudaGraph_t g, cudaGraphNode_t dep, int n,
                                 Bufs& b) {
  void* args[2];
  args[0] = &b.x;
  args[1] = &b.n;
  for (int i = 0; i < n; ++i)
    dep = add_kernel(g, dep, (void*)work, dim3((b.n + 255) / 256), dim3(256),
                     args);
  return dep;
}

static cudaGraphNode_t add_control(cudaGraph_t g, cudaGraphNode_t dep,
                                   cudaGraphConditionalHandle* h, Bufs& b) {
  void* args[3] = {h, &b.step, &b.num_steps};
  return add_kernel(g, dep, (void*)control, dim3(1), dim3(32), args);
}

static cudaGraphNode_t add_count(cudaGraph_t g, cudaGraphNode_t dep, Bufs& b) {
  void* args[2] = {&b.step, &b.num_steps};
  return add_kernel(g, dep, (void*)count, dim3(1), dim3(32), args);
}

static cudaGraphNode_t add_reset(cudaGraph_t g, Bufs& b) {
  void* args[1] = {&b.step};
  return add_kernel(g, nullptr, (void*)reset, dim3(1), dim3(1), args);
}

// control; WHILE { body; control } with the body as a child graph node
// (child = true, DeviceWhileLoop's shape) or as nodes of the WHILE body.
static cudaGraph_t build_loop(int n, bool child, Bufs& b,
                              cudaGraphConditionalHandle* h) {
  cudaGraph_t g;
  CK(cudaGraphCreate(&g, 0));
  CK(cudaGraphConditionalHandleCreate(h, g, 0, 0));
  cudaGraphNode_t dep = add_control(g, add_reset(g, b), h, b);
  cudaGraphNodeParams cp = {};
  cp.type = cudaGraphNodeTypeConditional;
  cp.conditional.handle = *h;
  cp.conditional.type = cudaGraphCondTypeWhile;
  cp.conditional.size = 1;
  cudaGraphNode_t cond;
#if CUDART_VERSION >= 13000
  CK(cudaGraphAddNode(&cond, g, &dep, nullptr, 1, &cp));
#else
  CK(cudaGraphAddNode(&cond, g, &dep, 1, &cp));
#endif
  cudaGraph_t body = cp.conditional.phGraph_out[0];
  cudaGraphNode_t last;
  if (child) {
    cudaGraph_t inner;
    CK(cudaGraphCreate(&inner, 0));
    add_chain(inner, nullptr, n, b);
    CK(cudaGraphAddChildGraphNode(&last, body, nullptr, 0, inner));
    CK(cudaGraphDestroy(inner));
  } else {
    last = add_chain(body, nullptr, n, b);
  }
  add_control(body, last, h, b);
  return g;
}

static cudaGraph_t build_static(int n, int iters, Bufs& b) {
  // The same kernels unrolled, a one-thread step update for each control.
  cudaGraph_t g;
  CK(cudaGraphCreate(&g, 0));
  cudaGraphNode_t dep = add_count(g, add_reset(g, b), b);
  for (int i = 0; i < iters; ++i) dep = add_count(g, add_chain(g, dep, n, b), b);
  return g;
}

static double time_graph(cudaGraph_t g, cudaStream_t s, int launches) {
  cudaGraphExec_t e;
  CK(cudaGraphInstantiate(&e, g, 0));
  CK(cudaGraphUpload(e, s));
  for (int i = 0; i < 10; ++i) CK(cudaGraphLaunch(e, s));
  cudaEvent_t a, z;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&z));
  double best = 1e30;
  for (int r = 0; r < 5; ++r) {
    CK(cudaEventRecord(a, s));
    for (int i = 0; i < launches; ++i) CK(cudaGraphLaunch(e, s));
    CK(cudaEventRecord(z, s));
    CK(cudaEventSynchronize(z));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, z));
    best = ms * 1e3 / launches < best ? ms * 1e3 / launches : best;
  }
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(z));
  CK(cudaGraphExecDestroy(e));
  return best;
}

int main(int argc, char** argv) {
  int launches = argc > 1 ? atoi(argv[1]) : 200;
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  Bufs b;
  b.n = 1 << 16;
  CK(cudaMalloc(&b.x, b.n * sizeof(float)));
  CK(cudaMemset(b.x, 0, b.n * sizeof(float)));
  CK(cudaMalloc(&b.step, sizeof(long long)));
  CK(cudaMalloc(&b.num_steps, sizeof(long long)));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  int driver;
  CK(cudaDriverGetVersion(&driver));
  printf("# %s, driver %d, runtime %d, %d launches a figure (best of 5)\n",
         prop.name, driver, CUDART_VERSION, launches);
  printf("# N I  static_us  child_us  inline_us  child-static  inline-static\n");
  const int sizes[] = {1, 8, 64, 256, 512};
  const int iters[] = {1, 2, 4};
  for (int n : sizes) {
    for (int it : iters) {
      long long steps = it + 1;
      CK(cudaMemcpy(b.num_steps, &steps, sizeof(steps), cudaMemcpyHostToDevice));
      cudaGraphConditionalHandle h2, h3;
      cudaGraph_t gs = build_static(n, it, b);
      cudaGraph_t gc = build_loop(n, true, b, &h2);
      cudaGraph_t gi = build_loop(n, false, b, &h3);
      double ts = time_graph(gs, s, launches);
      double tc = time_graph(gc, s, launches);
      double ti = time_graph(gi, s, launches);
      printf("%4d %d %10.2f %9.2f %10.2f %13.2f %14.2f\n", n, it, ts, tc, ti,
             tc - ts, ti - ts);
      fflush(stdout);
      CK(cudaGraphDestroy(gs));
      CK(cudaGraphDestroy(gc));
      CK(cudaGraphDestroy(gi));
    }
  }
  // The loop's iteration count, read back: it ran what num_steps asked.
  long long step;
  CK(cudaMemcpy(&step, b.step, sizeof(step), cudaMemcpyDeviceToHost));
  printf("# last loop's step counter: %lld (expected %d)\n", step, iters[2] + 1);
  return 0;
}
