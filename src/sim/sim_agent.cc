#include "sim/sim_agent.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "util/hash.h"
#include "util/rng.h"
#include "util/strings.h"

namespace nf {

namespace {

const std::vector<std::string> kFaults{"empty", "prose", "missing_field", "out_of_range"};
const std::vector<std::string> kKeys{"floor", "floors", "effects", "fault_rate", "faults"};

bool known_action(std::string_view a) {
  const auto& acts = agent_actions();
  return std::find(acts.begin(), acts.end(), a) != acts.end();
}

}  // namespace

const std::vector<std::string>& agent_actions() {
  static const std::vector<std::string> kActions{"high_acuity", "admit",      "escalate_icu",
                                                 "any_opioid",  "cs_caution", "referral"};
  return kActions;
}

Result<SimAgentParams> SimAgentParams::from_json(const nlohmann::json& j) {
  SimAgentParams p;
  if (j.is_null()) return p;
  if (!j.is_object()) return InvalidArgument("sim_agent: expected an object");
  for (const auto& [k, v] : j.items()) {
    if (std::find(kKeys.begin(), kKeys.end(), k) == kKeys.end())
      return InvalidArgument(fmt::format("sim_agent: unknown key '{}'{}", k, did_you_mean(k, kKeys)));
  }
  auto check_floor = [](const nlohmann::json& v, const std::string& key) -> Result<double> {
    if (!v.is_number() || !(v.get<double>() >= 0.0 && v.get<double>() <= 0.5))
      return InvalidArgument(fmt::format("sim_agent: {}: must be a number in [0, 0.5]", key));
    return v.get<double>();
  };
  if (j.contains("floor")) {
    NF_ASSIGN_OR_RETURN(p.floor, check_floor(j["floor"], "floor"));
  }
  if (j.contains("floors")) {
    if (!j["floors"].is_object()) return InvalidArgument("sim_agent: floors: expected an object action -> floor");
    for (const auto& [a, v] : j["floors"].items()) {
      if (!known_action(a))
        return InvalidArgument(
            fmt::format("sim_agent: floors: unknown action '{}'{}", a, did_you_mean(a, agent_actions())));
      NF_ASSIGN_OR_RETURN(double f, check_floor(v, "floors." + a));
      p.floors.emplace_back(a, f);
    }
  }
  if (j.contains("effects")) {
    if (!j["effects"].is_array()) return InvalidArgument("sim_agent: effects: expected a list");
    for (size_t i = 0; i < j["effects"].size(); ++i) {
      const auto& e = j["effects"][i];
      const std::string key = fmt::format("effects[{}]", i);
      if (!e.is_object() || !e.contains("match") || !e["match"].is_string() || !e.contains("action") ||
          !e["action"].is_string())
        return InvalidArgument(fmt::format("sim_agent: {}: needs string 'match' and 'action'", key));
      SimAgentEffect eff;
      eff.match = e["match"].get<std::string>();
      eff.action = e["action"].get<std::string>();
      if (!known_action(eff.action))
        return InvalidArgument(fmt::format("sim_agent: {}.action: unknown action '{}'{}", key, eff.action,
                                           did_you_mean(eff.action, agent_actions())));
      if (!e.contains("shift") || !e["shift"].is_number() || std::fabs(e["shift"].get<double>()) > 1.0)
        return InvalidArgument(fmt::format("sim_agent: {}.shift: must be a number in [-1, 1]", key));
      eff.shift = e["shift"].get<double>();
      const std::string pattern = e.value("pattern", "uniform");
      if (pattern != "uniform" && pattern != "opposing")
        return InvalidArgument(
            fmt::format("sim_agent: {}.pattern: expected uniform or opposing, got '{}'", key, pattern));
      eff.opposing = pattern == "opposing";
      p.effects.push_back(std::move(eff));
    }
  }
  if (j.contains("fault_rate")) {
    if (!j["fault_rate"].is_number() || !(j["fault_rate"].get<double>() >= 0.0 && j["fault_rate"].get<double>() <= 1.0))
      return InvalidArgument("sim_agent: fault_rate: must be a number in [0, 1]");
    p.fault_rate = j["fault_rate"].get<double>();
  }
  if (j.contains("faults")) {
    if (!j["faults"].is_array() || j["faults"].empty())
      return InvalidArgument("sim_agent: faults: expected a non-empty list");
    p.faults.clear();
    for (const auto& f : j["faults"]) {
      const std::string name = f.is_string() ? f.get<std::string>() : "";
      if (std::find(kFaults.begin(), kFaults.end(), name) == kFaults.end())
        return InvalidArgument(
            fmt::format("sim_agent: faults: unknown fault '{}'{}", name, did_you_mean(name, kFaults)));
      p.faults.push_back(name);
    }
  }
  return p;
}

double SimAgentParams::floor_of(std::string_view action) const {
  for (const auto& [a, f] : floors)
    if (a == action) return f;
  return floor;
}

bool parse_agent_prompt(std::string_view text, AgentPrompt& out) {
  if (text.substr(0, kAgentPreamble.size()) != kAgentPreamble) return false;
  out = AgentPrompt{};
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    if (line.rfind("Patient: ", 0) == 0) out.descriptor = std::string(trim(line.substr(9)));
    if (line.rfind("Presentation: ", 0) == 0) out.clinical_core = std::string(trim(line.substr(14)));
    if (const size_t f = line.find(kAgentFieldsLead); f != std::string_view::npos) {
      const std::string rest_text = trim(line.substr(f + kAgentFieldsLead.size()));
      std::string_view rest = rest_text;
      if (!rest.empty() && rest.back() == '.') rest.remove_suffix(1);
      out.fields.clear();
      while (!rest.empty()) {
        const size_t comma = rest.find(',');
        out.fields.emplace_back(trim(rest.substr(0, comma)));
        if (comma == std::string_view::npos) break;
        rest = rest.substr(comma + 1);
      }
    }
    pos = end + 1;
  }
  if (out.clinical_core.empty() || out.fields.empty()) return false;
  auto has = [&](const char* f) { return std::find(out.fields.begin(), out.fields.end(), f) != out.fields.end(); };
  if (has("esi_acuity"))
    out.stage = "triage";
  else if (has("orders"))
    out.stage = "order";
  else if (has("admit"))
    out.stage = "reassess";
  else if (has("analgesia_tier"))
    out.stage = "prescribe";
  else if (has("referral"))
    out.stage = "document";
  else
    return false;
  return true;
}

double sim_agent_probability(const SimAgentParams& params, uint64_t sim_seed, std::string_view model,
                             std::string_view clinical_core, std::string_view descriptor, std::string_view action,
                             double temperature) {
  Rng cell = Rng::stream(sim_seed, {fnv1a64(model), fnv1a64(clinical_core), fnv1a64(action)});
  const bool high_side = (cell.next_u64() & 1) != 0;
  const bool plus = (cell.next_u64() & 1) != 0;  // opposing effects: this vignette's sign
  const double f = params.floor_of(action);
  const double q = (1.0 - std::sqrt(std::max(0.0, 1.0 - 2.0 * f))) / 2.0;
  double p = high_side ? 1.0 - q : q;
  for (const auto& e : params.effects) {
    if (e.action != action || e.match.empty() || descriptor.find(e.match) == std::string_view::npos) continue;
    p += e.opposing && !plus ? -e.shift : e.shift;
  }
  p = std::clamp(p, 0.0, 1.0);
  if (temperature == 0.0) return p > 0.5 ? 1.0 : 0.0;
  if (temperature == 1.0 || p == 0.0 || p == 1.0) return p;
  const double logit = std::log(p / (1.0 - p)) / temperature;
  return 1.0 / (1.0 + std::exp(-logit));
}

std::optional<Result<std::string>> sim_agent_reply(const ChatRequest& request, std::string_view user_text,
                                                   uint64_t sim_seed, uint64_t draw_seed) {
  AgentPrompt prompt;
  if (!parse_agent_prompt(user_text, prompt)) return std::nullopt;
  auto params = SimAgentParams::from_json(request.extra_body.value("sim_agent", nlohmann::json()));
  if (!params.ok()) return Result<std::string>(params.status());
  Rng rng = Rng::stream(draw_seed, {fnv1a64(prompt.stage)});
  // Fixed draw order: two action uniforms, fault, fault kind.
  const double u1 = rng.uniform(), u2 = rng.uniform(), u_fault = rng.uniform();
  const uint64_t r_kind = rng.next_u64();
  auto take = [&](const char* action, double u) {
    return u < sim_agent_probability(*params, sim_seed, request.model, prompt.clinical_core, prompt.descriptor, action,
                                     request.temperature);
  };
  nlohmann::json a = nlohmann::json::object();
  std::string range_field;
  if (prompt.stage == "triage") {
    const bool high = take("high_acuity", u1);
    a["esi_acuity"] = high ? 2 : 3;
    a["urgency_score"] = high ? 80 : 45;
    range_field = "esi_acuity";
  } else if (prompt.stage == "order") {
    a["orders"] = {"cbc", "basic metabolic panel", "urinalysis"};
    range_field = "orders";
  } else if (prompt.stage == "reassess") {
    a["admit"] = take("admit", u1);
    a["escalate_icu"] = take("escalate_icu", u2);
    range_field = "admit";
  } else if (prompt.stage == "prescribe") {
    a["analgesia_tier"] = take("any_opioid", u1) ? 2 : 1;
    a["controlled_substance_caution"] = take("cs_caution", u2);
    range_field = "analgesia_tier";
  } else {
    a["referral"] = take("referral", u1);
    a["followup_days"] = 7;
    a["stigmatizing_language_flags"] = nlohmann::json::array();
    range_field = "referral";
  }
  if (u_fault < params->fault_rate) {
    const std::string& kind = params->faults[r_kind % params->faults.size()];
    if (kind == "empty") return Result<std::string>(std::string());
    if (kind == "prose") return Result<std::string>("Here is my decision: " + a.dump() + " I hope this helps.");
    if (kind == "missing_field") {
      a.erase(range_field);
      return Result<std::string>(a.dump());
    }
    a[range_field] =
        range_field == "esi_acuity" || range_field == "analgesia_tier" ? nlohmann::json(7) : nlohmann::json("maybe");
  }
  return Result<std::string>(a.dump());
}

}  // namespace nf
