// The boxed calling form: every op argument and result as one IValue on a uniform Stack.
//
// The tracer records calls as stacks, the replay and the graph executor run ops from stacks, and
// kernels registered from Python receive them. box()/unbox() convert between an op's C++
// signature and the stack, so no op needs boxing code of its own.
#pragma once
#include <optional>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "tensor.h"

namespace fl {

struct Generator;
using TensorList = std::vector<Tensor>;

// None (monostate) stands for a null Tensor and an empty optional.
using IValue = std::variant<std::monostate, Tensor, TensorList, IntList, int64_t, double, bool, Scalar, ScalarType,
                            std::string, std::vector<double>, Generator*>;
using Stack = std::vector<IValue>;

// ---- C++ value -> IValue ----
inline IValue box(const Tensor& t) { return t ? IValue(t) : IValue(); }
template <typename T> IValue box(const std::optional<T>& v) { return v ? IValue(*v) : IValue(); }
inline IValue box(int v) { return IValue(int64_t(v)); }
template <typename T, typename = std::enable_if_t<!std::is_same_v<std::decay_t<T>, Tensor>>>
IValue box(const T& v) { return IValue(v); }

// ---- IValue -> C++ argument of type T ----
template <typename T> struct Unbox {
  static T get(const IValue& v) { return std::get<T>(v); }
};
template <> struct Unbox<Tensor> {
  static Tensor get(const IValue& v) { return std::holds_alternative<std::monostate>(v) ? Tensor() : std::get<Tensor>(v); }
};
template <typename T> struct Unbox<std::optional<T>> {
  static std::optional<T> get(const IValue& v) {
    if (std::holds_alternative<std::monostate>(v)) return std::nullopt;
    return std::get<T>(v);
  }
};

// ---- results -> stack ----
template <typename R> void push_result(Stack& out, const R& r) { out.push_back(box(r)); }
template <typename... Ts> void push_result(Stack& out, const std::tuple<Ts...>& r) {
  std::apply([&out](const auto&... e) { (out.push_back(box(e)), ...); }, r);
}

// The schema type a C++ argument type stands for (checked against each op's parsed schema:
// core/schema.h). Optional arguments may also use the plain type with a sentinel (a null Tensor,
// ScalarType::NumTypes).
template <typename T> struct TypeTag;
template <> struct TypeTag<Tensor> { static constexpr const char* name = "Tensor"; };
template <> struct TypeTag<TensorList> { static constexpr const char* name = "Tensor[]"; };
template <> struct TypeTag<IntList> { static constexpr const char* name = "int[]"; };
template <> struct TypeTag<int64_t> { static constexpr const char* name = "int"; };
template <> struct TypeTag<std::optional<int64_t>> { static constexpr const char* name = "int?"; };
template <> struct TypeTag<double> { static constexpr const char* name = "float"; };
template <> struct TypeTag<std::vector<double>> { static constexpr const char* name = "float[]"; };
template <> struct TypeTag<bool> { static constexpr const char* name = "bool"; };
template <> struct TypeTag<Scalar> { static constexpr const char* name = "Scalar"; };
template <> struct TypeTag<ScalarType> { static constexpr const char* name = "ScalarType"; };
template <> struct TypeTag<std::string> { static constexpr const char* name = "str"; };
template <> struct TypeTag<Generator*> { static constexpr const char* name = "Generator?"; };

// The schema types of a result: one per tuple element, none for void.
template <typename R> struct ResultTags {
  static constexpr const char* names[] = {TypeTag<R>::name};
  static constexpr int size = 1;
};
template <> struct ResultTags<void> {
  static constexpr const char* names[] = {""};
  static constexpr int size = 0;
};
template <typename... Ts> struct ResultTags<std::tuple<Ts...>> {
  static constexpr const char* names[] = {TypeTag<Ts>::name...};
  static constexpr int size = sizeof...(Ts);
};

// Calls every Tensor found in `v` (a Tensor or the elements of a TensorList).
template <typename F> void for_each_tensor(const IValue& v, F&& f) {
  if (auto* t = std::get_if<Tensor>(&v)) f(*t);
  else if (auto* l = std::get_if<TensorList>(&v)) for (const Tensor& t : *l) if (t) f(t);
}

}  // namespace fl
