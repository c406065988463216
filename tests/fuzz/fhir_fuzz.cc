// libFuzzer harness for the FHIR agent's untrusted inputs (seed 002): model replies
// (parse_fhir_action, canonical_fhir_target), FHIR dateTimes, and arbitrary requests to
// the record server (target and body), which must answer an HTTP status and a JSON body,
// never crash. Not built by CMake. Build and run from the repository root:
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Isrc -I/usr/include/httplib tests/fuzz/fhir_fuzz.cc src/task/fhir_agent_task.cc src/task/fhir_grader.cc src/fhir/fhir_server.cc src/fhir/chart_fixture.cc src/backend/backend.cc src/core/types.cc src/util/*.cc $(pkg-config --cflags --libs cpp-httplib) -lfmt -lcrypto -lssl -lsqlite3 -o /tmp/fhir_fuzz && /tmp/fhir_fuzz -max_total_time=60
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fhir/fhir_server.h"
#include "task/fhir_agent_task.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const nf::FhirAction a = nf::parse_fhir_action(text);
  if (a.kind == nf::FhirAction::Kind::kInvalid && a.error.empty()) std::abort();
  if (a.kind == nf::FhirAction::Kind::kFinish && !a.answer.is_null() && !a.answer.is_array()) std::abort();
  (void)nf::canonical_fhir_target(text, "http://localhost:8080/fhir/");
  if (auto t = nf::parse_fhir_datetime(text); t && !(*t == *t)) std::abort();
  static auto server = [] {
    auto s = nf::FhirServer::create("http://localhost:8080/fhir/");
    (void)(*s)->put({{"resourceType", "Patient"}, {"id", "S1"}, {"identifier", {{{"value", "S1"}}}}});
    (void)(*s)->put({{"resourceType", "Observation"}, {"id", "o1"}, {"status", "final"}, {"code", {{"text", "K"}}},
                     {"subject", {{"reference", "Patient/S1"}}}, {"effectiveDateTime", "2023-01-01T00:00:00Z"}});
    return std::move(*s);
  }();
  const size_t nl = text.find('\n');
  const std::string target = text.substr(0, nl);
  const std::string body = nl == std::string::npos ? "" : text.substr(nl + 1);
  for (const char* m : {"GET", "POST"}) {
    const nf::FhirResponse r = server->handle({m, target, body}, "fuzz");
    if (r.status < 200 || r.status > 599 || !r.body.is_object()) std::abort();
  }
  return 0;
}
