// What a CUDA WHILE conditional node costs, by the size and kind of its body.
//
//   nvcc -O2 -arch=sm_90 -o while_node_cost benchmarks/while_node_cost.cu
//   ./while_node_cost [launches [body]]     (body: chain, memcpy, ... below)
//
// Session 54's profile (benchmarks/results/2026-12-06-h100-s54/) saw the GPU
// idle ~38 us a step between DSL's first loop_control kernel and the draft
// decode body's first kernel (a 16-layer draft step at 64 rows). Session 55's
// trace (benchmarks/results/2026-12-06-h100-s55/) put it inside the loop's own
// graph launch (same correlation id): 41.8 us each time the body starts, on
// the device. DeviceWhileLoop (vllm/v1/worker/gpu/conditional_graph.py)
// builds control; WHILE { child graph node (the captured body); control }.
// This program times, per graph launch (CUDA events over back-to-back
// launches, the GPU never waiting for the host once the body is long enough):
//   static   step; (body; step) x I, one plain graph, no conditional;
//   child    control; WHILE { child graph node of body; control }, I iterations;
//   inline   control; WHILE { body's nodes as nodes of the WHILE body; control };
// child - static is what the conditional node costs a launch; its growth
// with I is the per-iteration part. Part 1: bodies of N = 1 ... 512 chained
// small kernels, I = 1, 2, 4 (session 55 on an H100: 6.4 us at I = 1 and
// 3.7 us an added iteration, whatever N, child or inline: not the 42 us).
// Part 2: a body of 128 nodes of one kind that a torch-captured decode step
// holds and part 1's lacks, I = 1 and 2, to find which kind costs the 42 us:
//   memcpy   every 8th node a device-to-device memcpy node (tensor copies);
//   memset   every 8th node a memset node (zero_, fill of bytes);
//   funcs    32 different kernel functions in turn (a step's ~50 kinds);
//   params   every kernel with a 2 KB parameter (CUTLASS/FA3 param structs);
//   cluster  every 8th kernel launched with a 2x1x1 cluster (nvjet GEMMs);
//   pdl      every 8th edge programmatic (programmatic dependent launch);
//   fork     two chains of 64 that join (work on a side stream).
// Output: one line per (body, N, I).
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
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

// 32 kernel functions for the "funcs" body.
template <int K>
__global__ void work_k(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 0.999f + static_cast<float>(K);
}

// A kernel with a 2 KB parameter, for the "params" body.
struct Big {
  float* x;
  int n;
  char pad[2048 - sizeof(float*) - sizeof(int)];
};
__global__ void work_big(Big p) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < p.n) p.x[i] = p.x[i] * 0.999f + p.pad[i & 63];
}

// The kernel after a programmatic edge waits for the one before it.
__global__ void work_pdl(float* x, int n) {
  cudaGridDependencySynchronize();
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
  float* y;
  int n;
  long long* step;
  long long* num_steps;
  Big big;
};

enum Kind { CHAIN, MEMCPY, MEMSET, FUNCS, PARAMS, CLUSTER, PDL, FORK, NUM_KINDS };
static const char* kKindNames[NUM_KINDS] = {"chain",  "memcpy",  "memset", "funcs",
                                            "params", "cluster", "pdl",    "fork"};

template <int... K>
struct FuncTable {
  void* fns[sizeof...(K)] = {(void*)work_k<K>...};
};
static FuncTable<0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
                 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31>
    kFuncs;

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

// The i-th node of a body of `kind`, after dep; returns it.
static cudaGraphNode_t add_body_node(cudaGraph_t g, cudaGraphNode_t dep, Kind kind,
                                     int i, Bufs& b) {
  void* args[2] = {&b.x, &b.n};
  dim3 grid((b.n + 255) / 256), block(256);
  bool every8 = i % 8 == 7;
  cudaGraphNode_t node;
  if (kind == MEMCPY && every8) {
    CK(cudaGraphAddMemcpyNode1D(&node, g, dep ? &dep : nullptr, dep ? 1 : 0, b.y, b.x,
                                b.n * sizeof(float), cudaMemcpyDeviceToDevice));
    return node;
  }
  if (kind == MEMSET && every8) {
    cudaMemsetParams m = {};
    m.dst = b.y;
    m.value = 0;
    m.elementSize = 4;
    m.width = b.n;
    m.height = 1;
    CK(cudaGraphAddMemsetNode(&node, g, dep ? &dep : nullptr, dep ? 1 : 0, &m));
    return node;
  }
  if (kind == FUNCS) return add_kernel(g, dep, kFuncs.fns[i % 32], grid, block, args);
  if (kind == PARAMS) {
    void* big_args[1] = {&b.big};
    return add_kernel(g, dep, (void*)work_big, grid, block, big_args);
  }
  if (kind == CLUSTER && every8) {
    node = add_kernel(g, dep, (void*)work, grid, block, args);
    cudaLaunchAttributeValue v = {};
    v.clusterDim.x = 2;
    v.clusterDim.y = 1;
    v.clusterDim.z = 1;
    CK(cudaGraphKernelNodeSetAttribute(node, cudaLaunchAttributeClusterDimension, &v));
    return node;
  }
  if (kind == PDL && every8 && dep) {
    node = add_kernel(g, nullptr, (void*)work_pdl, grid, block, args);
    cudaGraphEdgeData e = {};
    e.from_port = cudaGraphKernelNodePortProgrammatic;
    e.type = cudaGraphDependencyTypeProgrammatic;
#if CUDART_VERSION >= 13000
    CK(cudaGraphAddDependencies(g, &dep, &node, &e, 1));
#else
    CK(cudaGraphAddDependencies_v2(g, &dep, &node, &e, 1));
#endif
    return node;
  }
  return add_kernel(g, dep, (void*)work, grid, block, args);
}

// A body of n nodes of `kind` after dep; returns its last node.
static cudaGraphNode_t add_body(cudaGraph_t g, cudaGraphNode_t dep, Kind kind, int n,
                                Bufs& b) {
  if (kind == FORK) {
    cudaGraphNode_t ends[2];
    for (int side = 0; side < 2; ++side) {
      ends[side] = dep;
      for (int i = 0; i < n / 2; ++i) ends[side] = add_body_node(g, ends[side], CHAIN, i, b);
    }
    cudaGraphNode_t join;
    CK(cudaGraphAddEmptyNode(&join, g, ends, 2));
    return join;
  }
  for (int i = 0; i < n; ++i) dep = add_body_node(g, dep, kind, i, b);
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
static cudaGraph_t build_loop(Kind kind, int n, bool child, Bufs& b,
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
    add_body(inner, nullptr, kind, n, b);
    CK(cudaGraphAddChildGraphNode(&last, body, nullptr, 0, inner));
    CK(cudaGraphDestroy(inner));
  } else {
    last = add_body(body, nullptr, kind, n, b);
  }
  add_control(body, last, h, b);
  return g;
}

static cudaGraph_t build_static(Kind kind, int n, int iters, Bufs& b) {
  // The same nodes unrolled, a one-thread step update for each control.
  cudaGraph_t g;
  CK(cudaGraphCreate(&g, 0));
  cudaGraphNode_t dep = add_count(g, add_reset(g, b), b);
  for (int i = 0; i < iters; ++i) dep = add_count(g, add_body(g, dep, kind, n, b), b);
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

static void time_body(Kind kind, int n, int it, cudaStream_t s, int launches, Bufs& b) {
  long long steps = it + 1;
  CK(cudaMemcpy(b.num_steps, &steps, sizeof(steps), cudaMemcpyHostToDevice));
  cudaGraphConditionalHandle h2, h3;
  cudaGraph_t gs = build_static(kind, n, it, b);
  cudaGraph_t gc = build_loop(kind, n, true, b, &h2);
  cudaGraph_t gi = build_loop(kind, n, false, b, &h3);
  double ts = time_graph(gs, s, launches);
  double tc = time_graph(gc, s, launches);
  double ti = time_graph(gi, s, launches);
  printf("%-8s %4d %d %10.2f %9.2f %10.2f %13.2f %14.2f\n", kKindNames[kind], n, it, ts,
         tc, ti, tc - ts, ti - ts);
  fflush(stdout);
  CK(cudaGraphDestroy(gs));
  CK(cudaGraphDestroy(gc));
  CK(cudaGraphDestroy(gi));
}

int main(int argc, char** argv) {
  int launches = argc > 1 ? atoi(argv[1]) : 200;
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  Bufs b = {};
  b.n = 1 << 16;
  CK(cudaMalloc(&b.x, b.n * sizeof(float)));
  CK(cudaMemset(b.x, 0, b.n * sizeof(float)));
  CK(cudaMalloc(&b.y, b.n * sizeof(float)));
  CK(cudaMalloc(&b.step, sizeof(long long)));
  CK(cudaMalloc(&b.num_steps, sizeof(long long)));
  b.big.x = b.x;
  b.big.n = b.n;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  int driver;
  CK(cudaDriverGetVersion(&driver));
  printf("# %s, driver %d, runtime %d, %d launches a figure (best of 5)\n",
         prop.name, driver, CUDART_VERSION, launches);
  printf("# body     N I  static_us  child_us  inline_us  child-static  inline-static\n");
  // argv[2], a body's name: only its lines (a kind the driver refuses in a
  // conditional body then fails alone).
  const char* only = argc > 2 ? argv[2] : nullptr;
  if (!only || !strcmp(only, "chain")) {
    const int sizes[] = {1, 8, 64, 256, 512};
    const int iters[] = {1, 2, 4};
    for (int n : sizes)
      for (int it : iters) time_body(CHAIN, n, it, s, launches, b);
  }
  // Part 2: one kind of node a torch-captured decode step holds, 128 nodes.
  for (int kind = MEMCPY; kind < NUM_KINDS; ++kind) {
    if (only && strcmp(only, kKindNames[kind])) continue;
    for (int it = 1; it <= 2; ++it) time_body(static_cast<Kind>(kind), 128, it, s, launches, b);
  }
  // The loop's iteration count, read back: it ran what num_steps asked.
  long long step;
  CK(cudaMemcpy(&step, b.step, sizeof(step), cudaMemcpyDeviceToHost));
  printf("# last loop's step counter: %lld (expected %d)\n", step,
         only && !strcmp(only, "chain") ? 5 : 3);
  return 0;
}
