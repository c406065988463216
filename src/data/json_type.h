// The type of a JSON value as a phrase for error messages of the dataset readers
// ("expected a string, found an array").
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace nf {

/// "null", "an object", "an array", "a string", "a boolean", "an integer" (signed or
/// unsigned), "a number" (floating point), or "an unsupported value" (binary, discarded).
inline std::string json_type(const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::object: return "an object";
    case nlohmann::json::value_t::array: return "an array";
    case nlohmann::json::value_t::string: return "a string";
    case nlohmann::json::value_t::boolean: return "a boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned: return "an integer";
    case nlohmann::json::value_t::number_float: return "a number";
    default: return "an unsupported value";
  }
}

}  // namespace nf
