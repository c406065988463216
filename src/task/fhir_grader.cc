#include "task/fhir_grader.h"

#include <cmath>
#include <regex>

#include <fmt/format.h>

namespace nf {

namespace {

struct Fail {
  std::string why;
};

// Path lookups that throw Fail with the path when absent.
const nlohmann::json& at(const nlohmann::json& j, const std::string& path) {
  const nlohmann::json* cur = &j;
  for (const auto& part : [&] {
         std::vector<std::string> v;
         size_t s = 0;
         while (true) {
           const size_t d = path.find('.', s);
           v.push_back(path.substr(s, d == std::string::npos ? std::string::npos : d - s));
           if (d == std::string::npos) break;
           s = d + 1;
         }
         return v;
       }()) {
    if (!part.empty() && std::isdigit(static_cast<unsigned char>(part[0]))) {
      const size_t i = std::stoul(part);
      if (!cur->is_array() || i >= cur->size()) throw Fail{path + " is missing"};
      cur = &(*cur)[i];
    } else {
      if (!cur->is_object() || !cur->contains(part)) throw Fail{path + " is missing"};
      cur = &(*cur)[part];
    }
  }
  return *cur;
}

void expect(bool ok, const std::string& what) {
  if (!ok) throw Fail{what};
}

void expect_eq(const nlohmann::json& p, const std::string& path, const nlohmann::json& want) {
  const auto& got = at(p, path);
  if (got.is_number() && want.is_number()) {
    expect(std::fabs(got.get<double>() - want.get<double>()) < 1e-9, fmt::format("{} is {}, expected {}", path, got.dump(), want.dump()));
    return;
  }
  expect(got == want, fmt::format("{} is {}, expected {}", path, got.dump(), want.dump()));
}

void expect_common(const nlohmann::json& p, const std::string& type, const std::string& mrn) {
  expect_eq(p, "resourceType", type);
  expect_eq(p, "subject", nlohmann::json{{"reference", "Patient/" + mrn}});
}

void expect_order(const IssuedOrder& o, const std::string& endpoint) {
  expect(o.endpoint == endpoint, fmt::format("POST went to '{}', expected [base]{}", o.endpoint, endpoint));
  expect(o.payload.is_object(), "the payload is not a JSON object");
}

std::string quoted(const std::string& s) {
  const size_t a = s.find('"');
  if (a == std::string::npos) return "";
  const size_t b = s.find('"', a + 1);
  return b == std::string::npos ? "" : s.substr(a + 1, b - a - 1);
}

bool answer_is(const nlohmann::json& answer, const nlohmann::json& want) {
  if (!answer.is_array()) return false;
  if (answer.empty()) return true;  // the benchmark accepts [] where it only asked to check
  if (answer.size() != want.size()) return false;
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i].is_number()) {
      if (!answer[i].is_number() || std::fabs(answer[i].get<double>() - want[i].get<double>()) > 1e-9) return false;
    } else if (answer[i] != want[i]) {
      return false;
    }
  }
  return true;
}

void expect_service_request(const nlohmann::json& p, const std::string& mrn, const std::string& system,
                            const std::string& code, const std::string& now) {
  expect_common(p, "ServiceRequest", mrn);
  expect_eq(p, "code.coding.0.system", system);
  expect_eq(p, "code.coding.0.code", code);
  expect_eq(p, "authoredOn", now);
  expect_eq(p, "status", "active");
  expect_eq(p, "intent", "order");
  expect_eq(p, "priority", "stat");
}

void expect_medication_request(const nlohmann::json& p, const std::string& mrn, const std::string& ndc,
                               const std::string& now) {
  expect_common(p, "MedicationRequest", mrn);
  expect_eq(p, "medicationCodeableConcept.coding.0.system", "http://hl7.org/fhir/sid/ndc");
  expect_eq(p, "medicationCodeableConcept.coding.0.code", ndc);
  const auto& authored = at(p, "authoredOn");
  expect(authored.is_string() && authored.get<std::string>().find(now.substr(0, 16)) != std::string::npos,
         "authoredOn is not now");
  expect_eq(p, "status", "active");
  expect_eq(p, "intent", "order");
}

}  // namespace

GradeResult grade_fhir_run(const MedAgentTask& task, const ChartFact& fact, const std::vector<IssuedOrder>& orders,
                           const nlohmann::json& answer, bool finished) {
  if (!finished) return {false, "the run did not FINISH"};
  const std::string now = kMedAgentBenchNow;
  const std::string& mrn = task.mrn;
  try {
    if (task.family == "task3") {
      expect(orders.size() == 1, fmt::format("{} POSTs, expected 1", orders.size()));
      const auto& o = orders[0];
      expect_order(o, "Observation");
      const auto& p = o.payload;
      expect_common(p, "Observation", mrn);
      expect(at(p, "category").is_array() && at(p, "category").size() == 1, "category must hold one entry");
      expect(at(p, "category.0.coding").is_array() && at(p, "category.0.coding").size() == 1, "category coding must hold one entry");
      expect_eq(p, "category.0.coding.0",
                {{"system", "http://hl7.org/fhir/observation-category"}, {"code", "vital-signs"}, {"display", "Vital Signs"}});
      expect_eq(p, "code", {{"text", "BP"}});
      expect_eq(p, "effectiveDateTime", now);
      expect_eq(p, "status", "final");
      expect_eq(p, "valueString", quoted(task.instruction));
    } else if (task.family == "task8") {
      expect(orders.size() == 1, fmt::format("{} POSTs, expected 1", orders.size()));
      expect_order(orders[0], "ServiceRequest");
      std::smatch m;
      std::string snomed;
      if (std::regex_search(task.context, m, std::regex("referral is ([0-9]+)"))) snomed = m[1].str();
      expect_service_request(orders[0].payload, mrn, "http://snomed.info/sct", snomed, now);
      const auto& note = at(orders[0].payload, "note");
      std::string text;
      if (note.is_object() && note.contains("text") && note["text"].is_string()) text = note["text"].get<std::string>();
      if (note.is_array() && !note.empty() && note[0].is_object() && note[0].contains("text") && note[0]["text"].is_string())
        text = note[0]["text"].get<std::string>();
      expect(text.find(quoted(task.instruction)) != std::string::npos, "note.text lacks the requested free text");
    } else if (task.family == "task5") {
      const bool order = fact.value && *fact.value <= 1.9;
      if (!order) {
        expect(orders.empty(), fmt::format("{} POSTs, expected none", orders.size()));
      } else {
        expect(orders.size() == 1, fmt::format("{} POSTs, expected 1", orders.size()));
        expect_order(orders[0], "MedicationRequest");
        const auto& p = orders[0].payload;
        expect_medication_request(p, mrn, "0338-1715-40", now);
        expect_eq(p, "dosageInstruction.0.route", "IV");
        const double v = *fact.value;
        const double g = v < 1.0 ? 4 : v < 1.5 ? 2 : 1;
        expect_eq(p, "dosageInstruction.0.doseAndRate.0.doseQuantity", {{"value", g}, {"unit", "g"}});
        expect_eq(p, "dosageInstruction.0.doseAndRate.0.rateQuantity", {{"value", g}, {"unit", "h"}});
      }
      expect(answer_is(answer, nlohmann::json::array({fact.value ? *fact.value : -1.0})), "the answer is not the magnesium read");
    } else if (task.family == "task9") {
      const bool order = fact.value && *fact.value < 3.5;
      if (!order) {
        expect(orders.empty(), fmt::format("{} POSTs, expected none", orders.size()));
      } else {
        expect(orders.size() == 2, fmt::format("{} POSTs, expected 2", orders.size()));
        expect_order(orders[0], "MedicationRequest");
        const auto& p = orders[0].payload;
        expect_medication_request(p, mrn, "40032-917-01", now);
        const auto& route = at(p, "dosageInstruction.0.route");
        expect(route.is_string() && [&] {
          std::string r = route.get<std::string>();
          for (auto& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
          return r == "oral";
        }(), "route is not oral");
        const auto& dose = at(p, "dosageInstruction.0.doseAndRate.0.doseQuantity.value");
        const double want = (3.5 - *fact.value) / 0.1 * 10.0;
        expect(dose.is_number() && std::fabs(dose.get<double>() - want) <= 1e-4, fmt::format("dose is {}, expected {}", dose.dump(), want));
        expect_eq(p, "dosageInstruction.0.doseAndRate.0.doseQuantity.unit", "mEq");
        expect_order(orders[1], "ServiceRequest");
        expect_service_request(orders[1].payload, mrn, "http://loinc.org", "2823-3", now);
        const auto& occ = at(orders[1].payload, "occurrenceDateTime");
        expect(occ.is_string() && occ.get<std::string>().find("2023-11-14T08:") != std::string::npos,
               "occurrenceDateTime is not 2023-11-14 at 08h");
      }
      expect(answer_is(answer, nlohmann::json::array({fact.value ? *fact.value : -1.0})), "the answer is not the potassium read");
    } else if (task.family == "task10") {
      bool order = true;
      if (fact.value && fact.time) {
        const auto last = parse_fhir_datetime(*fact.time);
        const auto cutoff = parse_fhir_datetime("2022-11-13T10:15:00+00:00");
        order = last && cutoff && *last < *cutoff;
      }
      if (order) {
        expect(orders.size() == 1, fmt::format("{} POSTs, expected 1", orders.size()));
        expect_order(orders[0], "ServiceRequest");
        expect_service_request(orders[0].payload, mrn, "http://loinc.org", "4548-4", now);
      } else {
        expect(orders.empty(), fmt::format("{} POSTs, expected none", orders.size()));
      }
      const nlohmann::json want = fact.value && fact.time ? nlohmann::json::array({*fact.value, *fact.time})
                                                         : nlohmann::json::array({-1});
      expect(answer_is(answer, want), "the answer is not the HbA1C read");
    } else {
      return {false, fmt::format("family '{}' is not a write family", task.family)};
    }
  } catch (const Fail& f) {
    return {false, f.why};
  } catch (const std::exception& e) {
    return {false, std::string("payload of the wrong shape: ") + e.what()};
  }
  return {true, ""};
}

}  // namespace nf
