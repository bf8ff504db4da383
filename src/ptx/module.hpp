// The library's PTX module (ptx/*.ptx, embedded at build time: module_text), loaded through the
// driver API once per CUDA context and JIT-compiled there for the context's device.
#pragma once

#include <initializer_list>

#include <cuda.h>
#include <cuda_runtime_api.h>

namespace resample::ptx::detail {

extern const char module_text[];

/// Kernel `name` of the module in the current context (the runtime's primary context of the current
/// device, made current if no context is): the first call in a context loads the module, under a
/// lock, so concurrent first calls load it once; later calls find the function in a cache.
CUfunction kernel(const char* name);

/// Enqueues kernel `name` on `stream`: `grid` blocks of `threads` threads, its arguments given as
/// pointers to their values, in order. Capturable in a CUDA graph (cuLaunchKernel on the stream).
void launch(const char* name, unsigned grid, unsigned threads, cudaStream_t stream, std::initializer_list<const void*> args);

/// JIT-compiles `text` as a module of its own in the current context and unloads it: throws
/// ptx_error with the JIT error log when the driver refuses it. The tests feed it broken PTX.
void jit_check(const char* text);

}  // namespace resample::ptx::detail
