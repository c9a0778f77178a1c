#include "cli/output/workload_text.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace kistore::cli {
namespace {

std::string short_parameter_name(const std::string& name) {
  static constexpr std::pair<std::string_view, std::string_view> kShort[] = {
      {"seq_len", "seq"},        {"sequence_length", "seq"},     {"batch_size", "bsz"},
      {"hidden_size", "hidden"}, {"intermediate_size", "inter"}, {"vocab_size", "vocab"},
      {"num_heads", "heads"},
  };
  for (const auto& [from, to] : kShort)
    if (name == from) return std::string(to);
  return name;
}

std::string short_dtype(std::string_view dtype) {
  static constexpr std::pair<std::string_view, std::string_view> kDtypes[] = {
      {"bfloat16", "bf16"}, {"float16", "fp16"}, {"half", "fp16"},
      {"float32", "fp32"},  {"float", "fp32"},   {"float64", "fp64"},
  };
  if (dtype.starts_with("torch.")) dtype.remove_prefix(6);
  for (const auto& [from, to] : kDtypes)
    if (dtype == from) return std::string(to);
  return std::string(dtype);
}

}  // namespace

std::string parameters_text(const Json& parameters, const std::set<std::string>& varying) {
  if (!parameters.is_object()) return "";
  std::vector<std::pair<std::string, std::string>> numbers;  // (short name, "name=value")
  std::vector<std::string> flags;
  std::string dtype;
  for (const auto& [name, value] : parameters.as_object()) {
    if (value.is_number()) {
      std::string shortened = short_parameter_name(name);
      numbers.emplace_back(shortened, shortened + "=" + format_number(value.as_number()));
    } else if (value.is_string() && name == "dtype") {
      dtype = short_dtype(value.as_string());
    } else if (value.is_string() && value.as_string().starts_with("torch.")) {
      flags.push_back(name + "=" + short_dtype(value.as_string()));
    } else if ((value.is_string() || value.is_bool()) && varying.count(name)) {
      flags.push_back(name + "=" + (value.is_string() ? value.as_string() : value.as_bool() ? "true" : "false"));
    }
  }
  std::sort(numbers.begin(), numbers.end());
  std::sort(flags.begin(), flags.end());
  std::string out;
  auto append = [&](const std::string& part) { out += (out.empty() ? "" : " ") + part; };
  for (const auto& n : numbers) append(n.second);
  for (const std::string& f : flags) append(f);
  if (!dtype.empty()) append(dtype);
  return out;
}

bool natural_less(std::string_view a, std::string_view b) {
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      std::size_t i0 = i, j0 = j;
      while (i < a.size() && digit(a[i])) ++i;
      while (j < b.size() && digit(b[j])) ++j;
      std::string_view x = a.substr(i0, i - i0), y = b.substr(j0, j - j0);
      while (x.size() > 1 && x[0] == '0') x.remove_prefix(1);
      while (y.size() > 1 && y[0] == '0') y.remove_prefix(1);
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      continue;
    }
    if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
    ++i, ++j;
  }
  return a.size() - i < b.size() - j;
}

}  // namespace kistore::cli
