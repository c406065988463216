#include "fhir/chart_fixture.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <set>

#include <fmt/format.h>

#include "util/file.h"
#include "util/hash.h"
#include "util/rng.h"
#include "util/strings.h"

namespace nf {

namespace {

std::string iso_utc(double epoch_s) {
  const time_t t = static_cast<time_t>(std::llround(epoch_s));
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S+00:00", &tm);
  return buf;
}

double round1(double v) { return std::round(v * 10.0) / 10.0; }

struct Lab {
  const char* code;
  const char* display;
  const char* unit;
  const char* category;  // observation-category code
};

nlohmann::json observation(const std::string& id, const std::string& mrn, const Lab& lab, double when,
                           const nlohmann::json& value) {
  const bool vital = std::string(lab.category) == "vital-signs";
  nlohmann::json o = {
      {"resourceType", "Observation"},
      {"id", id},
      {"meta", {{"versionId", "1"}}},
      {"status", "final"},
      {"category",
       nlohmann::json::array({{{"coding", nlohmann::json::array({{{"system", "http://terminology.hl7.org/CodeSystem/observation-category"},
                                                                   {"code", lab.category},
                                                                   {"display", vital ? "Vital Signs" : "Laboratory"}}})}}})},
      {"code",
       {{"coding", nlohmann::json::array({{{"system", "urn:noisefloor:flowsheet"}, {"code", lab.code}, {"display", lab.display}}})},
        {"text", lab.code}}},
      {"subject", {{"reference", "Patient/" + mrn}}},
      {"effectiveDateTime", iso_utc(when)},
      {"issued", iso_utc(when + 3600)}};
  if (value.is_string()) o["valueString"] = value;
  else o["valueQuantity"] = {{"value", value}, {"unit", lab.unit}, {"system", "http://unitsofmeasure.org"}, {"code", lab.unit}};
  return o;
}

const Lab kMg{"MG", "Magnesium", "mg/dL", "laboratory"};
const Lab kK{"K", "Potassium", "mmol/L", "laboratory"};
const Lab kA1c{"A1C", "Hemoglobin A1C", "%", "laboratory"};
const Lab kBp{"BP", "Blood pressure", "mmHg", "vital-signs"};

constexpr double kDay = 86400.0;

}  // namespace

Result<std::vector<nlohmann::json>> read_snapshot_patients(const std::string& path) {
  NF_ASSIGN_OR_RETURN(std::string text, read_file(path));
  std::vector<nlohmann::json> out;
  std::set<std::string> seen;
  size_t line_no = 0;
  for (const auto& line : split(text, '\n')) {
    ++line_no;
    if (line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      return DataLoss(fmt::format("{}:{}: not a JSON object", path, line_no));
    auto d = j.find("data");
    if (d == j.end()) return DataLoss(fmt::format("{}:{}: data: required field is missing", path, line_no));
    if (!d->is_object()) continue;
    auto entries = d->find("entry");
    if (entries == d->end() || !entries->is_array()) continue;
    for (const auto& e : *entries) {
      if (!e.is_object() || !e.contains("resource") || !e["resource"].is_object()) continue;
      const auto& r = e["resource"];
      if (r.value("resourceType", "") != "Patient" || !r.contains("id") || !r["id"].is_string()) continue;
      if (seen.insert(r["id"].get<std::string>()).second) out.push_back(r);
    }
  }
  return out;
}

Result<std::vector<ChartFact>> read_task_truth_audit(const std::string& path,
                                                     const std::map<std::string, std::string>& mrn_by_task) {
  NF_ASSIGN_OR_RETURN(std::string text, read_file(path));
  nlohmann::json rows = nlohmann::json::parse(text, nullptr, false);
  if (rows.is_discarded() || !rows.is_array()) return DataLoss(fmt::format("{}: expected a JSON array of rows", path));
  static const std::set<std::string> kFamilies{"task3", "task5", "task8", "task9", "task10"};
  std::vector<ChartFact> out;
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    auto bad = [&](const std::string& field, const std::string& what) {
      return DataLoss(fmt::format("{}: row {}: {}: {}", path, i + 1, field, what));
    };
    if (!r.is_object()) return bad("row", "not a JSON object");
    if (!r.contains("task") || !r["task"].is_string()) return bad("task", "missing or not a string");
    if (!r.contains("id") || !r["id"].is_string()) return bad("id", "missing or not a string");
    ChartFact f;
    f.family = r["task"].get<std::string>();
    if (!kFamilies.count(f.family)) continue;
    f.task_id = r["id"].get<std::string>();
    f.branch = r.value("branch", "");
    auto m = mrn_by_task.find(f.task_id);
    if (m == mrn_by_task.end()) return bad("id", fmt::format("task '{}' has no eval_MRN in the task file", f.task_id));
    f.mrn = m->second;
    const char* vkey = f.family == "task5" ? "live_latest_24h" : f.family == "task9" ? "live_latest_K" : nullptr;
    if (vkey != nullptr) {
      if (!r.contains(vkey)) return bad(vkey, "required field is missing");
      if (r[vkey].is_number()) f.value = r[vkey].get<double>();
      else if (!r[vkey].is_null()) return bad(vkey, "expected a number or null");
    }
    if (f.family == "task10") {
      if (!r.contains("live_ref_sol") || !r["live_ref_sol"].is_array() || r["live_ref_sol"].empty())
        return bad("live_ref_sol", "expected a non-empty array");
      const auto& sol = r["live_ref_sol"];
      if (sol.size() >= 2) {
        if (!sol[0].is_number() || !sol[1].is_string()) return bad("live_ref_sol", "expected [value, time] or [-1]");
        f.value = sol[0].get<double>();
        f.time = sol[1].get<std::string>();
        if (!parse_fhir_datetime(*f.time)) return bad("live_ref_sol", "the time is not a FHIR dateTime");
      }
    }
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<nlohmann::json> chart_fixture(const std::vector<ChartFact>& facts, uint64_t seed) {
  const double now = *parse_fhir_datetime(kMedAgentBenchNow);
  std::vector<nlohmann::json> out;
  for (const auto& f : facts) {
    Rng rng = Rng::stream(seed, {fnv1a64(f.task_id)});
    std::vector<nlohmann::json> history;
    int k = 0;
    auto id = [&f, &k] { return fmt::format("nf-{}-{}", f.task_id, k++); };
    std::optional<nlohmann::json> latest;
    if (f.family == "task3") {
      for (int i = 0; i < 6; ++i) {
        const double when = now - (30 + rng.uniform() * 700) * kDay;
        const int sys = 105 + static_cast<int>(rng.uniform_int(40)), dia = 60 + static_cast<int>(rng.uniform_int(30));
        history.push_back(observation(id(), f.mrn, kBp, when, fmt::format("{}/{} mmHg", sys, dia)));
      }
    } else if (f.family == "task5") {
      for (int i = 0; i < 8; ++i) {
        const double when = now - (1.25 + rng.uniform() * 400) * kDay;  // always more than 24 h ago
        history.push_back(observation(id(), f.mrn, kMg, when, round1(1.6 + rng.uniform() * 1.0)));
      }
      if (f.value) latest = observation(id(), f.mrn, kMg, now - (1 + rng.uniform() * 19) * 3600, *f.value);
    } else if (f.family == "task9") {
      for (int i = 0; i < 24; ++i) {
        const double when = now - (3 + rng.uniform() * 700) * kDay;
        history.push_back(observation(id(), f.mrn, kK, when, round1(3.5 + rng.uniform() * 1.5)));
      }
      if (f.value) latest = observation(id(), f.mrn, kK, now - (6 + rng.uniform() * 42) * 3600, *f.value);
    } else if (f.family == "task10") {
      if (f.value && f.time) {
        const double last = *parse_fhir_datetime(*f.time);
        for (int i = 0; i < 4; ++i) {
          const double when = last - (90 + rng.uniform() * 800) * kDay;
          history.push_back(observation(id(), f.mrn, kA1c, when, round1(5.0 + rng.uniform() * 4.0)));
        }
        latest = observation(id(), f.mrn, kA1c, last, *f.value);
        (*latest)["effectiveDateTime"] = *f.time;  // exactly as the grader reads it
      }
    }
    for (size_t i = history.size(); i > 1; --i) std::swap(history[i - 1], history[rng.uniform_int(i)]);
    for (auto& h : history) out.push_back(std::move(h));
    if (latest) out.push_back(std::move(*latest));
  }
  return out;
}

Result<std::unique_ptr<FhirServer>> build_medagentbench_server(const std::string& base_url,
                                                               const std::string& snapshot_path,
                                                               const std::string& audit_path,
                                                               const std::map<std::string, std::string>& mrn_by_task,
                                                               uint64_t seed) {
  NF_ASSIGN_OR_RETURN(auto patients, read_snapshot_patients(snapshot_path));
  NF_ASSIGN_OR_RETURN(auto facts, read_task_truth_audit(audit_path, mrn_by_task));
  NF_ASSIGN_OR_RETURN(auto server, FhirServer::create(base_url));
  std::set<std::string> ids;
  for (const auto& p : patients) {
    NF_RETURN_IF_ERROR(server->put(p));
    ids.insert(p["id"].get<std::string>());
  }
  for (const auto& f : facts)
    if (!ids.count(f.mrn))
      return InvalidArgument(fmt::format("{}: task {}: patient {} is not among the {} patients of {}", audit_path, f.task_id,
                                         f.mrn, ids.size(), snapshot_path));
  for (const auto& r : chart_fixture(facts, seed)) NF_RETURN_IF_ERROR(server->put(r));
  return server;
}

}  // namespace nf
