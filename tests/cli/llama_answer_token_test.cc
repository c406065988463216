// Against the real llama.cpp server shipped in ../shared/tools/llama-server (issue 11 "Must
// show"): a grammar-constrained MCQ study with logprobs; every ok draw's answer-position
// token is found (not the first generated token "<") and its own probability recorded;
// options absent from the top list stay unknown (null), never zero; the server's top list
// ignores the grammar and the draw says so. Skipped when the binary or model is missing.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>

#include "common/test_data.h"

namespace nf {
namespace {

TEST(LlamaServer, AnswerPositionTokenIsFoundForEveryOkDraw) {
  const std::string tools = std::string(NF_SOURCE_DIR) + "/../shared/tools/llama-server/bin/llama-server";
  const std::string model = testing::data_dir() + "/models/llama-2-tiny-random.gguf";
  if (!std::filesystem::exists(tools) || !std::filesystem::exists(model))
    GTEST_SKIP() << "llama-server or the tiny model is not here: " << tools;
  testing::TempDir t;
  const int port = 19000 + static_cast<int>(getpid() % 900);
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string log = t / "server.log";
    freopen(log.c_str(), "w", stdout);
    freopen(log.c_str(), "a", stderr);
    const std::string p = std::to_string(port);
    execl(tools.c_str(), tools.c_str(), "-m", model.c_str(), "--alias", "tiny", "--host", "127.0.0.1", "--port",
          p.c_str(), "-c", "2048", "-np", "2", "-t", "1", "--no-webui", "--offline", static_cast<char*>(nullptr));
    _exit(127);
  }
  ASSERT_GT(pid, 0);
  bool up = false;
  const std::string probe = "bash -c 'exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(port) +
                            " && printf \"GET /health HTTP/1.0\\r\\n\\r\\n\" >&3 && grep -q \"\\\"ok\\\"\" <&3' 2>/dev/null";
  for (int i = 0; i < 100 && !up; ++i) {
    up = std::system(probe.c_str()) == 0;
    if (!up) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!up) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    FAIL() << "llama-server did not come up: " << testing::slurp(t / "server.log");
  }
  testing::write_text(t / "study.yaml", R"(name: llama-answer-token
seed: 7
task: mcq
dataset:
  format: medqa
  path: ${NOISEFLOOR_DATA}/medqa/medqa_usmle_4options_test.jsonl
  limit: 8
  id_field: realidx
subjects:
  - name: tiny
    backend: openai
    model: tiny
    base_url: ${LLAMA_URL}
    logprobs: 5
    extra_body: {grammar: "root ::= \"<answer>\" [A-D] \"</answer>\""}
conditions: [none]
configs:
  temperature: [0, 0.8]
  seed: [1]
replicates: 2
analyses:
  floor: {}
)");
  auto a = testing::run_cli("audit " + (t / "study.yaml") + " --quiet --out " + (t / "out") + " --store " +
                                (t / "s.sqlite"),
                            t.path(), testing::data_env() + " LLAMA_URL=http://127.0.0.1:" + std::to_string(port) + "/v1");
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  auto e = testing::run_cli("export --store " + (t / "s.sqlite") + " --format jsonl --out " + (t / "d.jsonl"), t.path());
  ASSERT_EQ(e.exit_code, 0) << e.err;
  int ok = 0;
  std::istringstream in(testing::slurp(t / "d.jsonl"));
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    const auto d = nlohmann::json::parse(line);
    if (d.value("status", "") != "ok") continue;
    ++ok;
    const auto& x = d["extra"];
    ASSERT_TRUE(x.contains("answer_token")) << line;
    const auto& at = x["answer_token"];
    ASSERT_FALSE(at["position"].is_null()) << at.dump();
    EXPECT_GT(at["position"].get<int>(), 0) << "the first token is '<', not the letter";
    EXPECT_EQ(at["token"].get<std::string>().size(), 1u);
    EXPECT_GT(at["prob"].get<double>(), 0.0);
    EXPECT_TRUE(at.value("top_logprobs_ignore_constraint", false)) << at.dump();
    for (const auto& [letter, p] : x["option_probs"].items())
      EXPECT_TRUE(p.is_null() || p.get<double>() > 0.0) << letter << " " << p;  // unknown, never 0
  }
  EXPECT_EQ(ok, 32);
}

}  // namespace
}  // namespace nf
