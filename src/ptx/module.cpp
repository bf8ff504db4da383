// The driver API without linking libcuda: its functions come from the runtime
// (cudaGetDriverEntryPointByVersion), so programs built with the PTX backend still start on
// machines without a GPU driver, where the first call throws instead.
#include "module.hpp"

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
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

  driver() {
    resolve("cuGetErrorName", get_error_name);
    resolve("cuGetErrorString", get_error_string);
    resolve("cuCtxGetCurrent", ctx_get_current);
    resolve("cuCtxGetId", ctx_get_id);
    resolve("cuModuleLoadDataEx", module_load_data_ex);
    resolve("cuModuleUnload", module_unload);
    resolve("cuModuleGetFunction", module_get_function);
    resolve("cuLaunchKernel", launch_kernel);
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

  void check(CUresult r, const std::string& operation, std::string jit_log = {}) const {
    if (r != CUDA_SUCCESS) throw ptx_error(operation, describe(r), std::move(jit_log));
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

/// cuModuleLoadDataEx with an error log buffer; throws ptx_error carrying the log.
CUmodule load(const char* text, const char* what) {
  const driver& d = api();
  std::vector<char> log(1 << 16, '\0');
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log.data(), reinterpret_cast<void*>(static_cast<std::uintptr_t>(log.size() - 1))};
  CUmodule module = nullptr;
  const CUresult r = d.module_load_data_ex(&module, text, 2, options, values);
  d.check(r, std::string("cuModuleLoadDataEx (JIT compilation of ") + what + ")", std::string(log.data()));
  return module;
}

std::mutex cache_mutex;
std::map<unsigned long long, CUmodule> modules;                          // by context id
std::map<std::pair<unsigned long long, std::string>, CUfunction> functions;  // by context id and name

}  // namespace

CUfunction kernel(const char* name) {
  const auto [ctx, id] = current_context();
  const std::lock_guard<std::mutex> lock(cache_mutex);
  const auto key = std::make_pair(id, std::string(name));
  if (const auto f = functions.find(key); f != functions.end()) return f->second;
  auto m = modules.find(id);
  if (m == modules.end()) m = modules.emplace(id, load(module_text, "the resample module")).first;
  CUfunction function = nullptr;
  api().check(api().module_get_function(&function, m->second, name), std::string("cuModuleGetFunction(") + name + ")");
  functions.emplace(key, function);
  return function;
}

void launch(const char* name, unsigned grid, unsigned threads, cudaStream_t stream,
            std::initializer_list<const void*> args) {
  const CUfunction f = kernel(name);
  std::vector<void*> params;
  params.reserve(args.size());
  for (const void* a : args) params.push_back(const_cast<void*>(a));  // the driver reads them only
  api().check(api().launch_kernel(f, grid, 1, 1, threads, 1, 1, 0, reinterpret_cast<CUstream>(stream), params.data(),
                                  nullptr),
              std::string("cuLaunchKernel(") + name + ")");
}

void jit_check(const char* text) {
  (void)current_context();
  const CUmodule module = load(text, "a module given to jit_check");
  api().check(api().module_unload(module), "cuModuleUnload");
}

}  // namespace resample::ptx::detail
