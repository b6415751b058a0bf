// Errors that surface in Python as the exception type PyTorch raises for the same mistake.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>
#include <cstdint>

namespace fl {

struct Error : std::runtime_error { using std::runtime_error::runtime_error; };  // RuntimeError
struct IndexError : std::runtime_error { using std::runtime_error::runtime_error; };
struct TypeError : std::runtime_error { using std::runtime_error::runtime_error; };
struct ValueError : std::runtime_error { using std::runtime_error::runtime_error; };
struct NotImplementedError : std::runtime_error { using std::runtime_error::runtime_error; };

namespace detail {
inline void append(std::ostringstream&) {}
template <typename T>
void put(std::ostringstream& os, const T& v) { os << v; }
template <typename T>
void put(std::ostringstream& os, const std::vector<T>& v) {
  os << '[';
  for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  os << ']';
}
template <typename T, typename... Rest>
void append(std::ostringstream& os, const T& v, const Rest&... rest) { put(os, v); append(os, rest...); }
}  // namespace detail

template <typename... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream os;
  detail::append(os, args...);
  return os.str();
}

}  // namespace fl

// FL_CHECK(cond, ErrType, message parts...): throws ErrType with the parts concatenated.
#define FL_CHECK(cond, Err, ...) \
  do { if (!(cond)) throw ::fl::Err(::fl::str_cat(__VA_ARGS__)); } while (0)
