# Fails when src/text/tokenizer/char_class_table.cc differs from what
# tools/unicode/gen_char_classes.mjs generates (run with cmake -P; needs NODE and SOURCE_DIR).
execute_process(COMMAND ${NODE} ${SOURCE_DIR}/tools/unicode/gen_char_classes.mjs
                OUTPUT_VARIABLE generated RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gen_char_classes.mjs failed (${rc}); run: npm ci --prefix tools/peers")
endif()
file(READ ${SOURCE_DIR}/src/text/tokenizer/char_class_table.cc committed)
if(NOT generated STREQUAL committed)
  message(FATAL_ERROR "char_class_table.cc is stale or edited by hand; regenerate it:\n"
          "  node tools/unicode/gen_char_classes.mjs > src/text/tokenizer/char_class_table.cc")
endif()
message(STATUS "char_class_table.cc matches its generator (Unicode 16.0.0)")
