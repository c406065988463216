// serve-fhir's HTTP face (fhir/http_server.h): the same answers over a real socket.
#include "fhir/http_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include "common/test_data.h"
#include "data/medagentbench.h"
#include "fhir/chart_fixture.h"

namespace nf {
namespace {

TEST(FhirHttpServerTest, SearchAndWritesOverHttp) {
  const std::string dir = testing::data_dir() + "/medagentbench/";
  auto mrns = read_medagentbench_mrns(dir + "test_data_v2.json");
  ASSERT_TRUE(mrns.ok());
  auto srv = FhirHttpServer::start([&](const std::string& base) {
    return build_medagentbench_server(base, dir + "fhir_snapshot.jsonl", dir + "task_truth_audit.json", *mrns);
  });
  ASSERT_TRUE(srv.ok()) << srv.status().message();
  httplib::Client cli("127.0.0.1", (*srv)->port());
  auto r = cli.Get("/fhir/Observation?patient=S3241217&code=K&_sort=-date&_count=1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  auto j = nlohmann::json::parse(r->body);
  EXPECT_DOUBLE_EQ(j["entry"][0]["resource"]["valueQuantity"]["value"].get<double>(), 3.9);
  EXPECT_EQ(j["entry"][0]["fullUrl"].get<std::string>().rfind((*srv)->base_url(), 0), 0u);
  const std::string body = nlohmann::json{{"resourceType", "ServiceRequest"},
                                          {"status", "active"},
                                          {"intent", "order"},
                                          {"subject", {{"reference", "Patient/S3241217"}}}}
                               .dump();
  auto created = cli.Post("/fhir/ServiceRequest", body, "application/fhir+json");
  ASSERT_TRUE(created);
  EXPECT_EQ(created->status, 201);
  EXPECT_EQ(created->get_header_value("Location").rfind((*srv)->base_url() + "ServiceRequest/", 0), 0u);
  auto base = cli.Post("/fhir/", body, "application/fhir+json");
  ASSERT_TRUE(base);
  EXPECT_EQ(base->status, 400);
  EXPECT_EQ(nlohmann::json::parse(base->body)["resourceType"], "OperationOutcome");
  (*srv)->stop();
}

}  // namespace
}  // namespace nf
