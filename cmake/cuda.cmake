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
    # CMake 3.25 does not know the compile feature cuda_std_20 for nvcc 13; CUDA targets set the
    # CUDA_STANDARD property instead.
    set(CMAKE_CUDA_STANDARD 20)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    message(STATUS "resample: CUDA ${CMAKE_CUDA_COMPILER_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES}")
  else()
    message(STATUS "resample: no CUDA compiler found; CPU backends only")
  endif()
endif()
