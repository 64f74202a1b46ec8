"""pytest plugin: register vLLM's CPU replacements for its Triton kernels.

The CPU worker does this at start-up; unit tests that call those kernels
directly need it done once per session.
"""


def pytest_configure(config):
    from vllm.platforms import current_platform

    if current_platform.is_cpu():
        current_platform.import_kernels()
        current_platform.register_triton_kernel_overrides()
