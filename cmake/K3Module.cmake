# k3_module(NAME [UNITY] SOURCES ... DEPS ...): one folder = one static library k3_<NAME>.
# Dependencies are PRIVATE unless listed under PUBLIC_DEPS; tools/check_includes.py enforces the
# layering table in docs/architecture.md on the includes themselves.
# UNITY compiles the sources in batches of 8 per translation unit (CMake unity build): for folders
# of many small JSON/HTTP files, where parsing and instantiating the same headers dominates a clean
# build (CI builds twice, release and ASan). Names in the sources' anonymous namespaces must then
# be unique within the folder.
function(k3_module name)
  cmake_parse_arguments(ARG "UNITY" "" "SOURCES;DEPS;PUBLIC_DEPS" ${ARGN})
  add_library(k3_${name} STATIC ${ARG_SOURCES})
  if(ARG_UNITY)
    set_target_properties(k3_${name} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
  endif()
  target_include_directories(k3_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(k3_${name} PRIVATE ${K3_WARNING_FLAGS})
  target_link_libraries(k3_${name} PUBLIC ${ARG_PUBLIC_DEPS} PRIVATE ${ARG_DEPS})
endfunction()

# k3_test(NAME SOURCES ... DEPS ... [LABELS ...]): a gtest binary registered with CTest.
function(k3_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  # Batches of 8 test files per translation unit: gtest and the project headers are parsed once
  # per batch instead of once per file (about half of a clean build was test files). Helpers in
  # the tests' anonymous namespaces must then be unique within the target.
  set_target_properties(${name} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
  target_compile_options(${name} PRIVATE ${K3_WARNING_FLAGS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE K3_SHARED_DIR="${K3_SHARED_DIR}"
                             K3_PEERS_DIR="${K3_PEERS_DIR}" K3_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  if(NOT ARG_LABELS)
    set(ARG_LABELS fast)
  endif()
  gtest_discover_tests(${name} PROPERTIES LABELS "${ARG_LABELS}" DISCOVERY_TIMEOUT 60)
endfunction()
