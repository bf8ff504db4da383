// The library's PTX module: the files ptx/*.ptx (embedded at build time: module_sources), joined
// into one module (module_text), compiled by the driver's JIT once per CUDA context, for the
// context's device.
#pragma once

#include <cstddef>
#include <initializer_list>

#include <cuda.h>
#include <cuda_runtime_api.h>

namespace resample::ptx::detail {

struct ptx_source {
  const char* name;  ///< the file's name
  const char* text;
};
extern const ptx_source module_sources[];
extern const std::size_t module_source_count;
/// The files joined into one module (one header; each file's own code, the copies of other
/// files' functions left out): what the JIT compiles.
extern const char* const module_text;

/// Kernel `name` (a string literal: the cache keeps the pointer's text) of the module in the current
/// context (the runtime's primary context of the current device, made current if no context is):
/// the first call in a context links the module, under a lock, so concurrent first calls link it
/// once; later calls find the function in a cache.
CUfunction kernel(const char* name);

/// Enqueues kernel `name` on `stream`: `grid` blocks of `threads` threads, its arguments given as
/// pointers to their values, in order (at most 16), with `dynamic_shared_bytes` of dynamic shared
/// memory (past 48 KiB with the static arrays, after allow_dynamic_shared). Capturable in a CUDA
/// graph (cuLaunchKernel on the stream); no allocation.
void launch(const char* name, unsigned grid, unsigned threads, cudaStream_t stream,
            std::initializer_list<const void*> args, unsigned dynamic_shared_bytes = 0);

/// Lets kernel `name` (in the current context) take up to `bytes` of dynamic shared memory, which
/// the driver refuses past 48 KiB with its static arrays until told. Not a stream operation: call it
/// outside a graph's capture.
void allow_dynamic_shared(const char* name, unsigned bytes);

/// As launch, but the kernel may start before the kernel ahead of it in the stream has finished
/// (programmatic dependent launch, Hopper's griddepcontrol): once every block of that one has run
/// griddepcontrol.launch_dependents, or exited. Only for kernels that run griddepcontrol.wait
/// before they read or write anything a kernel of the call wrote. They may read the caller's
/// log-weights before it: the kernel ahead lets the next one start only after its own wait (these)
/// or at its end (any other), and each call's chain begins after a plain launch or a memset, so
/// whatever wrote the log-weights has finished. A stream being captured records a programmatic
/// edge, as the CUDA backend's launch_early does.
void launch_early(const char* name, unsigned grid, unsigned threads, cudaStream_t stream,
                  std::initializer_list<const void*> args);

/// JIT-compiles `text` as a module of its own in the current context and unloads it: throws
/// ptx_error with the JIT error log when the driver refuses it. The tests feed it broken PTX.
void jit_check(const char* text);

}  // namespace resample::ptx::detail
