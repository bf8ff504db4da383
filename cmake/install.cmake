# `cmake --install` puts the headers and a CMake package in the prefix, so that another project can
#   find_package(resample CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE resample::reference)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(DIRECTORY include/resample DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY cpu_reference DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/resample)
install(TARGETS resample_core resample_cpu resample_reference EXPORT resampleTargets)
if(TARGET resample_cuda)
  install(TARGETS resample_cuda resample_ptx EXPORT resampleTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
if(TARGET resample)
  install(TARGETS resample RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(EXPORT resampleTargets NAMESPACE resample:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/resample)
configure_package_config_file(cmake/resampleConfig.cmake.in ${PROJECT_BINARY_DIR}/resampleConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/resample)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/resampleConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/resampleConfig.cmake ${PROJECT_BINARY_DIR}/resampleConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/resample)
