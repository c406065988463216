// The FHIR record server (fhir/fhir_server.h) and the MedAgentBench chart
// (fhir/chart_fixture.h) on the real task files (seed 002 §3, §6).
#include "fhir/fhir_server.h"

#include <gtest/gtest.h>

#include "common/test_data.h"
#include "data/medagentbench.h"
#include "fhir/chart_fixture.h"

namespace nf {
namespace {

const std::string kBase = "http://nf.local/fhir/";

std::string mab(const std::string& f) { return testing::data_dir() + "/medagentbench/" + f; }

std::unique_ptr<FhirServer> real_server() {
  auto mrns = read_medagentbench_mrns(mab("test_data_v2.json"));
  EXPECT_TRUE(mrns.ok()) << mrns.status().message();
  auto s = build_medagentbench_server(kBase, mab("fhir_snapshot.jsonl"), mab("task_truth_audit.json"), *mrns);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? std::move(*s) : nullptr;
}

nlohmann::json service_request(const std::string& mrn) {
  return {{"resourceType", "ServiceRequest"},
          {"code", {{"coding", {{{"system", "http://loinc.org"}, {"code", "4548-4"}}}}}},
          {"authoredOn", "2023-11-13T10:15:00+00:00"},
          {"status", "active"},
          {"intent", "order"},
          {"priority", "stat"},
          {"subject", {{"reference", "Patient/" + mrn}}}};
}

TEST(FhirDateTimeTest, ParsesTheFhirFormsAndRejectsOthers) {
  EXPECT_EQ(*parse_fhir_datetime("1970-01-01T00:00:00+00:00"), 0.0);
  EXPECT_EQ(*parse_fhir_datetime("1970-01-01T01:00:00+01:00"), 0.0);
  EXPECT_EQ(*parse_fhir_datetime("1970-01-01T00:00:00Z"), 0.0);
  EXPECT_EQ(*parse_fhir_datetime("1970-01-02"), 86400.0);
  EXPECT_EQ(*parse_fhir_datetime("1970"), 0.0);
  EXPECT_DOUBLE_EQ(*parse_fhir_datetime("1970-01-01T00:00:01.5Z"), 1.5);
  EXPECT_EQ(*parse_fhir_datetime("2023-11-13T10:15:00+00:00"), 1699870500.0);
  for (const char* bad : {"", "2023-13-01", "2023-11-13T25:00", "2023-11-13 10:15", "2023-11-13T10:15:00+0000", "yesterday"})
    EXPECT_FALSE(parse_fhir_datetime(bad).has_value()) << bad;
}

TEST(FhirServerTest, ServiceRequestIs201AtItsEndpointAnd400AtTheBase) {
  auto s = real_server();
  ASSERT_NE(s, nullptr);
  const std::string body = service_request("S6227720").dump();
  FhirResponse typed = s->handle({"POST", "ServiceRequest", body}, "run1");
  EXPECT_EQ(typed.status, 201);
  EXPECT_EQ(typed.body["resourceType"], "ServiceRequest");
  ASSERT_TRUE(typed.body.contains("id"));
  EXPECT_EQ(typed.location, kBase + "ServiceRequest/" + typed.body["id"].get<std::string>() + "/_history/1");
  FhirResponse base = s->handle({"POST", "", body}, "run1");
  EXPECT_EQ(base.status, 400);
  EXPECT_EQ(base.body["resourceType"], "OperationOutcome");
  EXPECT_TRUE(base.location.empty());
  // The identical payload at the wrong typed endpoint, and other invalid bodies.
  EXPECT_EQ(s->handle({"POST", "MedicationRequest", body}, "run1").status, 400);
  EXPECT_EQ(s->handle({"POST", "ServiceRequest", "{not json"}, "run1").status, 400);
  auto no_intent = service_request("S6227720");
  no_intent.erase("intent");
  FhirResponse r = s->handle({"POST", "ServiceRequest", no_intent.dump()}, "run1");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body["issue"][0]["diagnostics"].get<std::string>().find("intent"), std::string::npos);
  EXPECT_EQ(s->handle({"POST", "ServiceRequest", service_request("S0000000").dump()}, "run1").status, 400);
  auto bad_status = service_request("S6227720");
  bad_status["status"] = "final";
  EXPECT_EQ(s->handle({"POST", "ServiceRequest", bad_status.dump()}, "run1").status, 400);
}

// Issue 32 item 6: a POST body nested past util/json_depth.h's limit is a 400 naming the
// limit (a hostile serve-fhir client must not crash the server by recursion); one level
// less is read as usual (here a 400 for its content, not for its depth).
TEST(FhirServerTest, ABodyNestedTooDeepIs400NamingTheLimit) {
  auto s = FhirServer::create(kBase);
  ASSERT_TRUE(s.ok()) << s.status().message();
  auto body = [](size_t depth) {
    return R"({"resourceType":"ServiceRequest","note":)" + std::string(depth, '[') + std::string(depth, ']') + "}";
  };
  for (size_t depth : {size_t{512}, size_t{100000}}) {
    FhirResponse r = (*s)->handle({"POST", "ServiceRequest", body(depth)}, "run1");
    EXPECT_EQ(r.status, 400) << depth;
    EXPECT_NE(r.body.dump().find("the request body: JSON nested deeper than 512 levels"), std::string::npos)
        << r.body.dump();
  }
  FhirResponse shallow = (*s)->handle({"POST", "ServiceRequest", body(511)}, "run1");
  EXPECT_EQ(shallow.body.dump().find("nested deeper"), std::string::npos) << shallow.body.dump();
}

TEST(FhirServerTest, WritesStayInTheirSessionAndIdsRepeatAcrossSessions) {
  auto s = real_server();
  ASSERT_NE(s, nullptr);
  const std::string body = service_request("S6227720").dump();
  FhirResponse a = s->handle({"POST", "ServiceRequest", body}, "a");
  FhirResponse b = s->handle({"POST", "ServiceRequest", body}, "b");
  EXPECT_EQ(a.status, 201);
  EXPECT_EQ(a.location.substr(a.location.find("ServiceRequest")), b.location.substr(b.location.find("ServiceRequest")))
      << "identical runs see identical Locations";
  FhirResponse dry = s->dry_run({"POST", "ServiceRequest", body}, "c");
  EXPECT_EQ(dry.status, 201);
  EXPECT_EQ(s->handle({"GET", "ServiceRequest?patient=S6227720", ""}, "a").body["total"], 1);
  EXPECT_EQ(s->handle({"GET", "ServiceRequest?patient=S6227720", ""}, "c").body["total"], 0) << "a dry run stores nothing";
  EXPECT_EQ(s->handle({"GET", "ServiceRequest?patient=S6227720", ""}, "").body["total"], 0);
  EXPECT_EQ(s->count("ServiceRequest"), 0);
}

TEST(FhirServerTest, Task9LatestPotassiumNeedsTheSort) {
  auto s = real_server();
  ASSERT_NE(s, nullptr);
  FhirResponse sorted = s->handle({"GET", "Observation?patient=S3241217&code=K&_sort=-date&_count=1", ""});
  ASSERT_EQ(sorted.status, 200);
  ASSERT_EQ(sorted.body["entry"].size(), 1u);
  const auto& latest = sorted.body["entry"][0]["resource"];
  EXPECT_DOUBLE_EQ(latest["valueQuantity"]["value"].get<double>(), 3.9);
  FhirResponse page = s->handle({"GET", "Observation?patient=S3241217&code=K", ""});
  ASSERT_EQ(page.status, 200);
  EXPECT_EQ(page.body["entry"].size(), 20u);
  EXPECT_GT(page.body["total"].get<int>(), 20);
  for (const auto& e : page.body["entry"]) EXPECT_NE(e["resource"]["id"], latest["id"]);
  // Paging: following `next` links visits every row once and reaches the latest.
  std::set<std::string> seen;
  std::string target = "Observation?patient=S3241217&code=K";
  bool found = false;
  for (int guard = 0; guard < 10 && !target.empty(); ++guard) {
    FhirResponse p = s->handle({"GET", target, ""});
    ASSERT_EQ(p.status, 200);
    for (const auto& e : p.body.value("entry", nlohmann::json::array())) {
      EXPECT_TRUE(seen.insert(e["resource"]["id"].get<std::string>()).second);
      found = found || e["resource"]["id"] == latest["id"];
    }
    target.clear();
    for (const auto& l : p.body["link"])
      if (l["relation"] == "next") target = l["url"].get<std::string>().substr(kBase.size());
  }
  EXPECT_EQ(static_cast<int>(seen.size()), page.body["total"].get<int>());
  EXPECT_TRUE(found);
  // _count=0 answers the total only, with no next link (a client following it would loop).
  FhirResponse zero = s->handle({"GET", "Observation?patient=S3241217&code=K&_count=0", ""});
  EXPECT_EQ(zero.body["total"], page.body["total"]);
  EXPECT_FALSE(zero.body.contains("entry"));
  EXPECT_EQ(zero.body["link"].size(), 1u);
}

TEST(FhirServerTest, EveryAuditFactHolds) {
  auto s = real_server();
  ASSERT_NE(s, nullptr);
  auto mrns = read_medagentbench_mrns(mab("test_data_v2.json"));
  auto facts = read_task_truth_audit(mab("task_truth_audit.json"), *mrns);
  ASSERT_TRUE(facts.ok()) << facts.status().message();
  EXPECT_EQ(facts->size(), 150u);
  for (const auto& f : *facts) {
    SCOPED_TRACE(f.task_id);
    EXPECT_EQ(s->handle({"GET", "Patient?identifier=" + f.mrn, ""}).body["total"], 1);
    if (f.family == "task5") {
      FhirResponse r = s->handle(
          {"GET", "Observation?patient=" + f.mrn + "&code=MG&date=ge2023-11-12T10:15:00%2B00:00&_sort=-date", ""});
      ASSERT_EQ(r.status, 200);
      if (f.value) {
        ASSERT_GE(r.body["total"].get<int>(), 1);
        EXPECT_DOUBLE_EQ(r.body["entry"][0]["resource"]["valueQuantity"]["value"].get<double>(), *f.value);
      } else {
        EXPECT_EQ(r.body["total"], 0);
        EXPECT_GT(s->handle({"GET", "Observation?patient=" + f.mrn + "&code=MG", ""}).body["total"].get<int>(), 0)
            << "older history exists";
      }
    } else if (f.family == "task9" || f.family == "task10") {
      const std::string code = f.family == "task9" ? "K" : "A1C";
      FhirResponse r = s->handle({"GET", "Observation?patient=" + f.mrn + "&code=" + code + "&_sort=-date&_count=1", ""});
      ASSERT_EQ(r.status, 200);
      if (!f.value) {
        EXPECT_EQ(r.body["total"], 0);
        continue;
      }
      const auto& o = r.body["entry"][0]["resource"];
      EXPECT_DOUBLE_EQ(o["valueQuantity"]["value"].get<double>(), *f.value);
      if (f.time) {
        EXPECT_EQ(o["effectiveDateTime"], *f.time);
      }
      EXPECT_GT(r.body["total"].get<int>(), 1) << "older history exists";
    }
  }
}

TEST(FhirServerTest, SearchErrorsAreOperationOutcomes) {
  auto s = real_server();
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->handle({"GET", "Observation?patient=S3241217&colour=red", ""}).status, 400);
  EXPECT_EQ(s->handle({"GET", "Observation?date=yesterday", ""}).status, 400);
  EXPECT_EQ(s->handle({"GET", "Spaceship?patient=1", ""}).status, 404);
  EXPECT_EQ(s->handle({"GET", "Patient/S3241217", ""}).status, 200);
  EXPECT_EQ(s->handle({"GET", "Patient/nope", ""}).status, 404);
  FhirResponse r = s->handle({"GET", "Patient?family=stafford&birthdate=1932-12-29", ""});
  EXPECT_EQ(r.body["total"], 1);
}

TEST(ChartFixtureTest, ReadersNameTheBadRow) {
  auto bad = read_task_truth_audit(mab("task_truth_audit.json"), {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("row"), std::string::npos);
  EXPECT_NE(bad.status().message().find("eval_MRN"), std::string::npos);
  EXPECT_EQ(read_snapshot_patients("/nonexistent.jsonl").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace nf
