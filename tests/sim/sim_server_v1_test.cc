// serve-sim answers only under /v1, like a real OpenAI-compatible server: a base URL
// without /v1 gets a 404 that says how to fix it (issue 12 item 6).
#include <gtest/gtest.h>
#include <httplib.h>

#include "sim/sim_server.h"

namespace nf {
namespace {

TEST(SimServer, BaseUrlWithoutV1IsRejectedLikeARealServer) {
  auto server = SimServer::start(SimParams{}, 0);
  ASSERT_TRUE(server.ok()) << server.status().to_string();
  httplib::Client cli("127.0.0.1", (*server)->port());
  const std::string body =
      R"({"model": "sim-mcq-1", "messages": [{"role": "user", "content": "Q?\nA. a\nB. b"}]})";
  auto bad = cli.Post("/chat/completions", body, "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 404);
  EXPECT_NE(bad->body.find("must end with /v1"), std::string::npos) << bad->body;
  auto models = cli.Get("/models");
  ASSERT_TRUE(models);
  EXPECT_EQ(models->status, 404);
  auto good = cli.Post("/v1/chat/completions", body, "application/json");
  ASSERT_TRUE(good);
  EXPECT_EQ(good->status, 200) << good->body;
  EXPECT_EQ((*server)->base_url().substr((*server)->base_url().size() - 3), "/v1");
}

}  // namespace
}  // namespace nf
