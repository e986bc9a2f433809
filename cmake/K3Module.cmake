# k3_module(NAME SOURCES ... DEPS ...): one folder = one static library k3_<NAME>.
# Dependencies are PRIVATE unless listed under PUBLIC_DEPS; tools/check_includes.py enforces the
# layering table in docs/architecture.md on the includes themselves.
function(k3_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PUBLIC_DEPS" ${ARGN})
  add_library(k3_${name} STATIC ${ARG_SOURCES})
  target_include_directories(k3_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(k3_${name} PRIVATE ${K3_WARNING_FLAGS})
  target_link_libraries(k3_${name} PUBLIC ${ARG_PUBLIC_DEPS} PRIVATE ${ARG_DEPS})
endfunction()

# k3_test(NAME SOURCES ... DEPS ... [LABELS ...]): a gtest binary registered with CTest.
function(k3_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_compile_options(${name} PRIVATE ${K3_WARNING_FLAGS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE K3_SHARED_DIR="${K3_SHARED_DIR}"
                             K3_PEERS_DIR="${K3_PEERS_DIR}" K3_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  if(NOT ARG_LABELS)
    set(ARG_LABELS fast)
  endif()
  gtest_discover_tests(${name} PROPERTIES LABELS "${ARG_LABELS}" DISCOVERY_TIMEOUT 60)
endfunction()
