# CUDA is optional: the library, its tests and the command line build without nvcc or a GPU.
# When nvcc is found it is enabled for the CUDA backend; the architecture list is a cache variable
# so that a two-core CI machine compiles for one architecture only.
include(CheckLanguage)
option(RESAMPLE_ENABLE_CUDA "Enable CUDA when a CUDA compiler is found" ON)
set(RESAMPLE_HAVE_CUDA OFF)
if(RESAMPLE_ENABLE_CUDA)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90 CACHE STRING "CUDA architectures to build for (default: sm_90, Hopper)")
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(RESAMPLE_HAVE_CUDA ON)
    # CMake 3.25 does not know nvcc 13's flag for C++20: a CUDA target that needs C++20 (through
    # CUDA_STANDARD or the cxx_std_20 it inherits) fails with "requires the language dialect CUDA20".
    # Tell it the flag; newer CMake versions know it already.
    if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    endif()
    message(STATUS "resample: CUDA ${CMAKE_CUDA_COMPILER_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES}")
  else()
    message(STATUS "resample: no CUDA compiler found; CPU backends only")
  endif()
endif()

# What every CUDA target of the project needs: C++20, and constexpr host functions (std::bit_width,
# std::numeric_limits) callable from device code in the shared host/device headers.
function(resample_cuda_target target)
  set_target_properties(${target} PROPERTIES CUDA_STANDARD 20 CUDA_STANDARD_REQUIRED ON)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>)
endfunction()
