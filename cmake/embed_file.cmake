# cmake -DINPUT=<file> -DOUTPUT=<file.cpp> -DFUNCTION=<name> -DHEADER=<include> -P embed_file.cmake
# Writes a C++ source that defines `std::string_view sf::FUNCTION()` returning INPUT's bytes
# (as a byte array, so any content is safe). Run at build time (add_custom_command), so the
# embedded file stays a real file in the tree and an edit rebuilds only this source.
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" hex_len)
math(EXPR n "${hex_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
# Break the array into lines of 32 bytes (160 characters) to keep the file readable.
# (CMake's regex has no {n}: the byte's pattern is repeated 32 times.)
string(REPEAT "0x[0-9a-f][0-9a-f]," 32 line_pattern)
string(REGEX REPLACE "(${line_pattern})" "\\1\n" bytes "${bytes}")
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT} by cmake/embed_file.cmake; do not edit.\n"
  "#include \"${HEADER}\"\n\n"
  "namespace sf {\n\n"
  "namespace {\nconst unsigned char bytes[${n} + 1] = {\n${bytes}0};\n}  // namespace\n\n"
  "std::string_view ${FUNCTION}() { return {reinterpret_cast<const char *>(bytes), ${n}}; }\n\n"
  "}  // namespace sf\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
