#include "common/npy_file.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

namespace spccl::perf {

namespace {

constexpr unsigned char kMagic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

struct DtypeName {
  const char* code;  // without the byte-order character
  spcclDataType_t type;
};
// numpy has no bfloat16, so nothing maps to spcclBfloat16.
constexpr DtypeName kDtypes[] = {
    {"i1", spcclInt8},    {"u1", spcclUint8},   {"i4", spcclInt32},
    {"u4", spcclUint32},  {"i8", spcclInt64},   {"u8", spcclUint64},
    {"f2", spcclFloat16}, {"f4", spcclFloat32}, {"f8", spcclFloat64},
};

bool fail(std::string* error, const std::string& name, const std::string& what) {
  *error = name + ": " + what;
  return false;
}

// The value text of 'key' in the header's Python dict literal, up to the
// next top-level ',' or '}'.
bool headerField(const std::string& header, const char* key, std::string* value) {
  const std::string quoted = std::string("'") + key + "'";
  size_t at = header.find(quoted);
  if (at == std::string::npos) return false;
  at = header.find(':', at + quoted.size());
  if (at == std::string::npos) return false;
  ++at;
  while (at < header.size() && header[at] == ' ') ++at;
  int depth = 0;
  size_t end = at;
  for (; end < header.size(); ++end) {
    const char c = header[end];
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
  }
  *value = header.substr(at, end - at);
  while (!value->empty() && value->back() == ' ') value->pop_back();
  return true;
}

bool parseDescr(const std::string& text, const std::string& name, NpyArray* array,
                std::string* error) {
  if (text.size() < 4 || (text.front() != '\'' && text.front() != '"') ||
      text.back() != text.front()) {
    return fail(error, name,
                "dtype " + text +
                    " is not a simple type string (structured arrays "
                    "are not supported)");
  }
  array->descr = text.substr(1, text.size() - 2);
  const char order = array->descr[0];
  const std::string code = array->descr.substr(1);
  if (order == '>')
    return fail(error, name, "dtype " + array->descr + " is big-endian; save it little-endian");
  if (order != '<' && order != '|' && order != '=') {
    return fail(error, name, "dtype " + array->descr + " has no byte-order character");
  }
  for (const DtypeName& dtype : kDtypes) {
    if (code == dtype.code) {
      if (order == '|' && code[1] != '1') {
        return fail(error, name, "dtype " + array->descr + " is multi-byte without a byte order");
      }
      array->type = dtype.type;
      return true;
    }
  }
  return fail(
      error, name,
      "dtype " + array->descr + " is not supported (supported: i1 u1 i4 u4 i8 u8 f2 f4 f8)");
}

bool parseShape(const std::string& text, const std::string& name, NpyArray* array,
                std::string* error) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') {
    return fail(error, name, "shape " + text + " is not a tuple");
  }
  array->shape.clear();
  array->elements = 1;
  const char* cursor = text.c_str() + 1;
  for (;;) {
    while (*cursor == ' ' || *cursor == ',') ++cursor;
    if (*cursor == ')') break;
    char* end = nullptr;
    errno = 0;
    const unsigned long long extent = std::strtoull(cursor, &end, 10);
    if (end == cursor || errno != 0 || *cursor == '-') {
      return fail(error, name, "shape " + text + " has a bad extent");
    }
    if (extent != 0 && array->elements > SIZE_MAX / extent) {
      return fail(error, name, "shape " + text + " is too large");
    }
    array->shape.push_back(extent);
    array->elements *= extent;
    cursor = end;
  }
  return true;
}

}  // namespace

bool parseNpy(const std::vector<unsigned char>& bytes, const std::string& name, NpyArray* array,
              std::string* error) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return fail(error, name, "not a .npy file (no \\x93NUMPY magic)");
  }
  const unsigned major = bytes[6];
  if (major < 1 || major > 3) {
    return fail(error, name, "unsupported .npy version " + std::to_string(major));
  }
  // Version 1 has a 2-byte header length, versions 2 and 3 a 4-byte one
  // (numpy.lib.format); all little-endian.
  const size_t lengthBytes = major == 1 ? 2 : 4;
  if (bytes.size() < 8 + lengthBytes) return fail(error, name, "truncated header");
  size_t headerLength = 0;
  for (size_t i = 0; i < lengthBytes; ++i) headerLength |= size_t{bytes[8 + i]} << (8 * i);
  const size_t dataStart = 8 + lengthBytes + headerLength;
  if (bytes.size() < dataStart) return fail(error, name, "truncated header");
  const std::string header(bytes.begin() + static_cast<std::ptrdiff_t>(8 + lengthBytes),
                           bytes.begin() + static_cast<std::ptrdiff_t>(dataStart));

  std::string descr, fortranOrder, shape;
  if (!headerField(header, "descr", &descr) ||
      !headerField(header, "fortran_order", &fortranOrder) ||
      !headerField(header, "shape", &shape)) {
    return fail(error, name, "header lacks descr, fortran_order or shape: " + header);
  }
  if (!parseDescr(descr, name, array, error) || !parseShape(shape, name, array, error))
    return false;
  // A 1-D array is the same in either order.
  if (fortranOrder != "False" && array->shape.size() > 1) {
    return fail(error, name, "Fortran order is not supported; save with numpy.ascontiguousarray");
  }
  const size_t elementBytes = spcclTypeSize(array->type);
  if (array->elements > SIZE_MAX / elementBytes) return fail(error, name, "array is too large");
  const size_t dataBytes = array->elements * elementBytes;
  if (bytes.size() - dataStart != dataBytes) {
    return fail(error, name,
                "body holds " + std::to_string(bytes.size() - dataStart) + " bytes, shape and " +
                    "dtype need " + std::to_string(dataBytes));
  }
  array->data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(dataStart), bytes.end());
  return true;
}

bool readNpyFile(const std::string& path, NpyArray* array, std::string* error) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return fail(error, path, std::string("cannot open: ") + std::strerror(errno));
  const std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(file)),
                                         std::istreambuf_iterator<char>());
  if (file.bad()) return fail(error, path, "read error");
  return parseNpy(bytes, path, array, error);
}

}  // namespace spccl::perf
