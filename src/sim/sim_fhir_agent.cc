#include "sim/sim_fhir_agent.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <regex>

#include <fmt/format.h>

#include "util/hash.h"
#include "util/json_depth.h"
#include "util/rng.h"
#include "util/strings.h"

namespace nf {

Result<SimFhirAgentParams> SimFhirAgentParams::from_json(const nlohmann::json& j) {
  SimFhirAgentParams p;
  if (j.is_null()) return p;
  if (!j.is_object()) return InvalidArgument("sim_fhir_agent: expected an object");
  for (const auto& [k, v] : j.items()) {
    double* slot = k == "omission"        ? &p.omission
                   : k == "misrouting"    ? &p.misrouting
                   : k == "payload_noise" ? &p.payload_noise
                   : k == "extra_get"     ? &p.extra_get
                   : k == "garbage"       ? &p.garbage
                                          : nullptr;
    if (k == "scale_with_temperature") {
      if (!v.is_boolean()) return InvalidArgument("sim_fhir_agent.scale_with_temperature: expected a boolean");
      p.scale_with_temperature = v.get<bool>();
      continue;
    }
    if (slot == nullptr)
      return InvalidArgument(fmt::format(
          "sim_fhir_agent: unknown key '{}' (known: omission, misrouting, payload_noise, extra_get, garbage, "
          "scale_with_temperature)",
          k));
    if (!v.is_number() || v.get<double>() < 0.0 || v.get<double>() > 1.0)
      return InvalidArgument(fmt::format("sim_fhir_agent.{}: expected a probability in [0, 1], got {}", k, v.dump()));
    *slot = v.get<double>();
  }
  return p;
}

double SimFhirAgentParams::effective(double p, double temperature) const {
  return scale_with_temperature ? p * std::min(1.0, std::max(0.0, temperature)) : p;
}

namespace {

std::string section(const std::string& text, const std::string& head, const std::string& next) {
  const size_t a = text.rfind(head);
  if (a == std::string::npos) return "";
  const size_t b = next.empty() ? std::string::npos : text.find(next, a + head.size());
  return text.substr(a + head.size(), b == std::string::npos ? std::string::npos : b - a - head.size());
}

std::string first_quoted(const std::string& s) {
  const size_t a = s.find('"');
  if (a == std::string::npos) return "";
  const size_t b = s.find('"', a + 1);
  return b == std::string::npos ? "" : s.substr(a + 1, b - a - 1);
}

// The JSON object inside an environment message (first '{' to last '}'), or null.
nlohmann::json embedded_json(const std::string& s) {
  const size_t a = s.find('{'), b = s.rfind('}');
  if (a == std::string::npos || b == std::string::npos || b < a) return nullptr;
  const std::string text = s.substr(a, b - a + 1);
  if (!check_json_depth(text, "message").ok()) return nullptr;  // a serve-sim client's message: no recursion bomb
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  return j.is_discarded() ? nlohmann::json(nullptr) : j;
}

nlohmann::json subject(const std::string& mrn) { return {{"reference", "Patient/" + mrn}}; }

struct Order {
  std::string endpoint;
  nlohmann::json payload;
};

// Changes one clinical field of `o` (variant 0 or 1).
void perturb(Order& o, uint64_t variant) {
  auto& p = o.payload;
  if (p.contains("dosageInstruction")) {
    auto& q = p["dosageInstruction"][0]["doseAndRate"][0]["doseQuantity"]["value"];
    q = q.get<double>() + (variant % 2 == 0 ? 10.0 : 20.0);
  } else if (p.contains("valueString")) {
    p["valueString"] = variant % 2 == 0 ? "118/77" : "77/118 mmHg";
  } else if (p.contains("code") && p["code"].contains("coding")) {
    p["code"]["coding"][0]["code"] = variant % 2 == 0 ? "2345-7" : "11579-0";
  }
}

}  // namespace

std::optional<Result<std::string>> sim_fhir_agent_reply(const ChatRequest& request, uint64_t sim_seed) {
  const ChatMessage* first = nullptr;
  for (const auto& m : request.messages)
    if (m.role == "user") {
      first = &m;
      break;
    }
  if (first == nullptr || !starts_with(first->content, kFhirAgentPreamble)) return std::nullopt;
  auto params = SimFhirAgentParams::from_json(request.extra_body.value("sim_fhir_agent", nlohmann::json(nullptr)));
  if (!params.ok()) return Result<std::string>(params.status());
  const std::string& prompt = first->content;
  const std::string context = section(prompt, "\nContext: ", "\nQuestion: ");
  const std::string question = section(prompt, "\nQuestion: ", "");
  std::string base;
  if (size_t g = prompt.find("GET http"); g != std::string::npos) {
    const size_t end = prompt.find('"', g);
    std::string url = prompt.substr(g + 4, end == std::string::npos ? std::string::npos : end - g - 4);
    base = url.substr(0, url.rfind('/') + 1);
  }
  std::smatch m;
  std::string mrn;
  if (std::regex_search(question, m, std::regex("S[0-9]{7}"))) mrn = m.str();
  std::string now = "2023-11-13T10:15:00+00:00";
  if (std::regex_search(context, m, std::regex("It's ([0-9T:+-]+) now"))) now = m[1].str();
  const std::string ql = [&] {
    std::string s = question;
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  }();
  std::string family = ql.find("magnesium") != std::string::npos   ? "task5"
                       : ql.find("potassium") != std::string::npos ? "task9"
                       : ql.find("a1c") != std::string::npos       ? "task10"
                       : ql.find("referral") != std::string::npos  ? "task8"
                       : ql.find("blood pressure") != std::string::npos ? "task3"
                                                                        : "";
  // Run-level draws (fixed order), then per-turn garbage.
  const double t = request.temperature;
  const uint64_t seed_id = t == 0.0 ? 0 : static_cast<uint64_t>(request.seed.value_or(0));
  Rng run = Rng::stream(sim_seed, {fnv1a64(request.model), fnv1a64(prompt), seed_id, std::bit_cast<uint64_t>(t), 0xf41ULL});
  const bool omit = run.uniform() < params->effective(params->omission, t);
  const bool extra = run.uniform() < params->effective(params->extra_get, t);
  std::vector<std::pair<bool, bool>> order_noise;  // (misroute, payload) per order
  std::vector<uint64_t> variants;
  for (int k = 0; k < 4; ++k) {
    const bool mis = run.uniform() < params->effective(params->misrouting, t);
    const bool pay = run.uniform() < params->effective(params->payload_noise, t);
    order_noise.emplace_back(mis, pay);
    variants.push_back(run.next_u64());
  }
  size_t turn = 0;
  for (const auto& msg : request.messages)
    if (msg.role == "assistant") ++turn;
  Rng per_turn = Rng::stream(sim_seed, {fnv1a64(request.model), fnv1a64(prompt), seed_id, std::bit_cast<uint64_t>(t), turn});
  if (per_turn.uniform() < params->effective(params->garbage, t))
    return Result<std::string>(std::string("I would check the chart first and then decide what to order."));

  std::vector<std::string> gets;
  if (extra) gets.push_back(base + "Patient?identifier=" + mrn);
  std::string code;
  if (family == "task5") code = "MG";
  if (family == "task9") code = "K";
  if (family == "task10") code = "A1C";
  if (!code.empty()) {
    std::string q = base + "Observation?patient=" + mrn + "&code=" + code;
    if (family == "task5") q += "&date=ge2023-11-12T10:15:00%2B00:00";
    gets.push_back(q + "&_sort=-date&_count=1");
  }
  if (turn < gets.size()) return Result<std::string>("GET " + gets[turn]);

  // The value read by the last GET (from the user message answering it).
  std::optional<double> value;
  std::string when;
  if (!code.empty()) {
    size_t seen = 0;
    for (size_t i = 0; i < request.messages.size(); ++i) {
      if (request.messages[i].role != "assistant") continue;
      if (++seen == gets.size() && i + 1 < request.messages.size()) {
        nlohmann::json b = embedded_json(request.messages[i + 1].content);
        if (b.is_object() && b.contains("entry") && b["entry"].is_array() && !b["entry"].empty()) {
          const auto& r = b["entry"][0]["resource"];
          if (r.contains("valueQuantity") && r["valueQuantity"].contains("value")) value = r["valueQuantity"]["value"].get<double>();
          when = r.value("effectiveDateTime", "");
        }
      }
    }
  }
  std::vector<Order> orders;
  nlohmann::json answer = nlohmann::json::array();
  if (family == "task3") {
    orders.push_back({"Observation",
                      {{"resourceType", "Observation"},
                       {"category", {{{"coding", {{{"system", "http://hl7.org/fhir/observation-category"}, {"code", "vital-signs"}, {"display", "Vital Signs"}}}}}}},
                       {"code", {{"text", "BP"}}},
                       {"effectiveDateTime", now},
                       {"status", "final"},
                       {"valueString", first_quoted(question)},
                       {"subject", subject(mrn)}}});
  } else if (family == "task8") {
    std::string snomed;
    if (std::regex_search(context, m, std::regex("referral is ([0-9]+)"))) snomed = m[1].str();
    orders.push_back({"ServiceRequest",
                      {{"resourceType", "ServiceRequest"},
                       {"code", {{"coding", {{{"system", "http://snomed.info/sct"}, {"code", snomed}}}}}},
                       {"authoredOn", now},
                       {"status", "active"},
                       {"intent", "order"},
                       {"priority", "stat"},
                       {"note", {{"text", first_quoted(question)}}},
                       {"subject", subject(mrn)}}});
  } else if (family == "task5") {
    answer.push_back(value ? *value : -1.0);
    if (value && *value <= 1.9) {
      const double g = *value < 1.0 ? 4 : *value < 1.5 ? 2 : 1;
      orders.push_back({"MedicationRequest",
                        {{"resourceType", "MedicationRequest"},
                         {"medicationCodeableConcept", {{"coding", {{{"system", "http://hl7.org/fhir/sid/ndc"}, {"code", "0338-1715-40"}}}}}},
                         {"authoredOn", now},
                         {"dosageInstruction", {{{"route", "IV"}, {"doseAndRate", {{{"doseQuantity", {{"value", g}, {"unit", "g"}}}, {"rateQuantity", {{"value", g}, {"unit", "h"}}}}}}}}},
                         {"status", "active"},
                         {"intent", "order"},
                         {"subject", subject(mrn)}}});
    }
  } else if (family == "task9") {
    answer.push_back(value ? *value : -1.0);
    if (value && *value < 3.5) {
      const double dose = std::round((3.5 - *value) / 0.1 * 10.0 * 1e6) / 1e6;
      orders.push_back({"MedicationRequest",
                        {{"resourceType", "MedicationRequest"},
                         {"medicationCodeableConcept", {{"coding", {{{"system", "http://hl7.org/fhir/sid/ndc"}, {"code", "40032-917-01"}}}}}},
                         {"authoredOn", now},
                         {"dosageInstruction", {{{"route", "oral"}, {"doseAndRate", {{{"doseQuantity", {{"value", dose}, {"unit", "mEq"}}}}}}}}},
                         {"status", "active"},
                         {"intent", "order"},
                         {"subject", subject(mrn)}}});
      orders.push_back({"ServiceRequest",
                        {{"resourceType", "ServiceRequest"},
                         {"code", {{"coding", {{{"system", "http://loinc.org"}, {"code", "2823-3"}}}}}},
                         {"authoredOn", now},
                         {"status", "active"},
                         {"intent", "order"},
                         {"priority", "stat"},
                         {"occurrenceDateTime", "2023-11-14T08:00:00+00:00"},
                         {"subject", subject(mrn)}}});
    }
  } else if (family == "task10") {
    bool stale = true;
    if (value && !when.empty()) {
      answer = nlohmann::json::array({*value, when});
      // Older than one year before now (2022-11-13T10:15:00+00:00 for the benchmark's now).
      stale = when < "2022-11-13T10:15:00+00:00";
    } else {
      answer = nlohmann::json::array({-1});
    }
    if (stale)
      orders.push_back({"ServiceRequest",
                        {{"resourceType", "ServiceRequest"},
                         {"code", {{"coding", {{{"system", "http://loinc.org"}, {"code", "4548-4"}}}}}},
                         {"authoredOn", now},
                         {"status", "active"},
                         {"intent", "order"},
                         {"priority", "stat"},
                         {"subject", subject(mrn)}}});
  }
  if (omit) orders.clear();
  for (size_t k = 0; k < orders.size() && k < order_noise.size(); ++k) {
    if (order_noise[k].second) perturb(orders[k], variants[k]);
    if (order_noise[k].first) orders[k].endpoint = "";
  }
  const size_t k = turn - gets.size();
  if (k < orders.size()) return Result<std::string>("POST " + base + orders[k].endpoint + "\n" + orders[k].payload.dump());
  return Result<std::string>("FINISH(" + answer.dump() + ")");
}

}  // namespace nf
