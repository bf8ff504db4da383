// The driver API without linking libcuda: its functions come from the runtime
// (cudaGetDriverEntryPointByVersion), so programs built with the PTX backend still start on
// machines without a GPU driver, where the first call throws instead.
#include "module.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "resample/cuda/error.hpp"
#include "resample/ptx/error.hpp"

namespace resample::ptx::detail {
namespace {

/// The driver functions the backend uses, resolved once (as of the CUDA 12.0 ABI).
struct driver {
  decltype(&::cuGetErrorName) get_error_name = nullptr;
  decltype(&::cuGetErrorString) get_error_string = nullptr;
  decltype(&::cuCtxGetCurrent) ctx_get_current = nullptr;
  decltype(&::cuCtxGetId) ctx_get_id = nullptr;
  decltype(&::cuModuleLoadDataEx) module_load_data_ex = nullptr;
  decltype(&::cuModuleUnload) module_unload = nullptr;
  decltype(&::cuModuleGetFunction) module_get_function = nullptr;
  decltype(&::cuLaunchKernel) launch_kernel = nullptr;
  decltype(&::cuLaunchKernelEx) launch_kernel_ex = nullptr;
  decltype(&::cuFuncSetAttribute) func_set_attribute = nullptr;

  driver() {
    resolve("cuGetErrorName", get_error_name);
    resolve("cuGetErrorString", get_error_string);
    resolve("cuCtxGetCurrent", ctx_get_current);
    resolve("cuCtxGetId", ctx_get_id);
    resolve("cuModuleLoadDataEx", module_load_data_ex);
    resolve("cuModuleUnload", module_unload);
    resolve("cuModuleGetFunction", module_get_function);
    resolve("cuLaunchKernel", launch_kernel);
    resolve("cuLaunchKernelEx", launch_kernel_ex);
    resolve("cuFuncSetAttribute", func_set_attribute);
  }

  template <class F>
  static void resolve(const char* symbol, F& f) {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found{};
    cuda::check(cudaGetDriverEntryPointByVersion(symbol, &p, 12000, cudaEnableDefault, &found),
                (std::string("cudaGetDriverEntryPointByVersion(") + symbol + ")").c_str());
    if (found != cudaDriverEntryPointSuccess || p == nullptr) {
      throw ptx_error(std::string("finding the driver function ") + symbol,
                      found == cudaDriverEntryPointVersionNotSufficent ? "the driver is older than CUDA 12.0"
                                                                       : "symbol not found");
    }
    f = reinterpret_cast<F>(p);
  }

  /// "CUDA_ERROR_X (what it means)".
  [[nodiscard]] std::string describe(CUresult r) const {
    const char* name = nullptr;
    const char* text = nullptr;
    if (get_error_name(r, &name) != CUDA_SUCCESS) name = "unknown CUresult";
    if (get_error_string(r, &text) != CUDA_SUCCESS) text = "";
    return std::string(name) + " (" + text + ")";
  }

  /// Throws ptx_error for a failed call; `what` (the call, e.g. "cuLaunchKernel") and `name` (what
  /// it worked on) make the message, built only on failure.
  void check(CUresult r, const char* what, const char* name = nullptr, const char* jit_log = nullptr) const {
    if (r == CUDA_SUCCESS) return;
    std::string operation = what;
    if (name) operation.append("(").append(name).append(")");
    throw ptx_error(operation, describe(r), jit_log ? jit_log : "");
  }
};

const driver& api() {
  static const driver d;  // thread-safe initialisation; a failure throws again on the next call
  return d;
}

/// The current context and its unique id (a destroyed context's handle may be reused; its id is not).
std::pair<CUcontext, unsigned long long> current_context() {
  const driver& d = api();
  CUcontext ctx = nullptr;
  d.check(d.ctx_get_current(&ctx), "cuCtxGetCurrent");
  if (ctx == nullptr) {  // no context yet: let the runtime make its primary context current
    cuda::check(cudaFree(nullptr), "cudaFree(nullptr) (initialising the CUDA context)");
    d.check(d.ctx_get_current(&ctx), "cuCtxGetCurrent");
    if (ctx == nullptr) throw ptx_error("finding a CUDA context", "none is current after the runtime's initialisation");
  }
  unsigned long long id = 0;
  d.check(d.ctx_get_id(ctx, &id), "cuCtxGetId");
  return {ctx, id};
}

/// A JIT error log buffer and the options that hand it to the driver.
struct jit_log {
  std::vector<char> text = std::vector<char>(1 << 16, '\0');
  CUjit_option options[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[2] = {text.data(), reinterpret_cast<void*>(static_cast<std::uintptr_t>(text.size() - 1))};
};

/// The library's module: the joined text (module_text) JIT-compiled for the context's device.
/// Throws ptx_error with the JIT's log.
CUmodule load_library_module() {
  const driver& d = api();
  jit_log log;
  CUmodule module = nullptr;
  d.check(d.module_load_data_ex(&module, module_text, 2, log.options, log.values), "cuModuleLoadDataEx",
          "the library's PTX module", log.text.data());
  return module;
}

std::mutex cache_mutex;
std::map<unsigned long long, CUmodule> modules;                               // by context id
std::map<std::pair<unsigned long long, std::string_view>, CUfunction> functions;  // by context id and name

}  // namespace

CUfunction kernel(const char* name) {
  const auto [ctx, id] = current_context();
  const std::lock_guard<std::mutex> lock(cache_mutex);
  const auto key = std::make_pair(id, std::string_view(name));
  if (const auto f = functions.find(key); f != functions.end()) return f->second;
  auto m = modules.find(id);
  if (m == modules.end()) m = modules.emplace(id, load_library_module()).first;
  CUfunction function = nullptr;
  api().check(api().module_get_function(&function, m->second, name), "cuModuleGetFunction", name);
  functions.emplace(key, function);
  return function;
}

namespace {

/// The arguments as the driver takes them: pointers to their values.
std::array<void*, 16> parameters(const char* name, std::initializer_list<const void*> args) {
  std::array<void*, 16> params{};
  if (args.size() > params.size()) throw ptx_error("launching", std::string(name) + " has too many arguments");
  std::size_t i = 0;
  for (const void* a : args) params[i++] = const_cast<void*>(a);  // the driver only reads them
  return params;
}

}  // namespace

void launch(const char* name, unsigned grid, unsigned threads, cudaStream_t stream,
            std::initializer_list<const void*> args, unsigned dynamic_shared_bytes) {
  const CUfunction f = kernel(name);
  auto params = parameters(name, args);
  api().check(api().launch_kernel(f, grid, 1, 1, threads, 1, 1, dynamic_shared_bytes,
                                  reinterpret_cast<CUstream>(stream), params.data(), nullptr),
              "cuLaunchKernel", name);
}

void allow_dynamic_shared(const char* name, unsigned bytes) {
  api().check(api().func_set_attribute(kernel(name), CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                       static_cast<int>(bytes)),
              "cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)", name);
}

void launch_early(const char* name, unsigned grid, unsigned threads, cudaStream_t stream,
                  std::initializer_list<const void*> args) {
  // The module is for sm_90 (.target), so a device that loaded it has programmatic launch.
  const CUfunction f = kernel(name);
  auto params = parameters(name, args);
  CUlaunchAttribute early{};
  early.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  early.value.programmaticStreamSerializationAllowed = 1;
  CUlaunchConfig config{};
  config.gridDimX = grid;
  config.gridDimY = 1;
  config.gridDimZ = 1;
  config.blockDimX = threads;
  config.blockDimY = 1;
  config.blockDimZ = 1;
  config.hStream = reinterpret_cast<CUstream>(stream);
  config.attrs = &early;
  config.numAttrs = 1;
  api().check(api().launch_kernel_ex(&config, f, params.data(), nullptr), "cuLaunchKernelEx", name);
}

void jit_check(const char* text) {
  (void)current_context();
  const driver& d = api();
  jit_log log;
  CUmodule module = nullptr;
  d.check(d.module_load_data_ex(&module, text, 2, log.options, log.values), "cuModuleLoadDataEx",
          "a module given to jit_check", log.text.data());
  d.check(d.module_unload(module), "cuModuleUnload");
}

}  // namespace resample::ptx::detail
