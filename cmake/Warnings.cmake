# Warnings are errors everywhere in our own code.
set(K3_WARNING_FLAGS -Wall -Wextra -Werror -Wno-missing-field-initializers)
if(K3_NATIVE)
  add_compile_options(-march=native)
endif()
