# Warnings are errors everywhere in our own code.
set(K3_WARNING_FLAGS -Wall -Wextra -Werror -Wno-missing-field-initializers)
# GCC 12 at -O3 reports -Wrestrict inside libstdc++'s std::string concatenation (operator+ with
# a literal), a known false positive (GCC bug 105329, fixed in GCC 13).
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  list(APPEND K3_WARNING_FLAGS -Wno-restrict)
endif()
# GCC's -Wmaybe-uninitialized is unreliable on sanitizer-instrumented code (the GCC manual warns
# of false positives with -fsanitize; here std::optional<std::vector> moves in tests). The
# sanitizer builds check memory at run time instead; the release build keeps the warning.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND K3_SANITIZE)
  list(APPEND K3_WARNING_FLAGS -Wno-maybe-uninitialized)
endif()
# x86-64-v2 (SSE4.2, POPCNT; every x86-64 server CPU since 2009) is the baseline; K3_NATIVE tunes
# for the build machine instead.
if(K3_NATIVE)
  add_compile_options(-march=native)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  add_compile_options(-march=x86-64-v2)
endif()
