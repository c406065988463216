// `noisefloor serve-sim` end to end: the real binary, its stdout line, signals, exit codes.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "backend/openai.h"
#include "sim/sim.h"
#include "sim/sim_server.h"
#include "sim/sim_test_util.h"

namespace nf {
namespace {

struct Child {
  pid_t pid = -1;
  int out_fd = -1;
};

// Starts NF_BINARY with `args`, stdout piped back, stderr to /dev/null.
Child spawn(const std::vector<std::string>& args) {
  int fds[2];
  if (::pipe(fds) != 0) return {};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    const int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, STDERR_FILENO);
    ::close(fds[0]);
    ::close(fds[1]);
    std::vector<char*> argv;
    std::string bin = NF_BINARY;
    argv.push_back(bin.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(bin.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  return {pid, fds[0]};
}

std::string read_line(int fd) {
  std::string line;
  char c = 0;
  while (::read(fd, &c, 1) == 1 && c != '\n') line += c;
  return line;
}

std::string read_all(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n = 0;
  while ((n = ::read(fd, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  return out;
}

int wait_exit(pid_t pid) {
  int status = 0;
  for (int i = 0; i < 500; ++i) {  // up to 10 s
    if (::waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return -2;
}

void require_binary() {
  ASSERT_TRUE(std::filesystem::exists(NF_BINARY)) << "build the noisefloor target first: " << NF_BINARY;
}

TEST(ServeSimCli, ServesTheSimulatorUntilSigterm) {
  require_binary();
  Child c = spawn({"serve-sim", "--port", "0", "--seed", "13", "--spread", "2", "--parse-error-rate", "0.05"});
  ASSERT_GT(c.pid, 0);
  const std::string line = read_line(c.out_fd);
  const std::string prefix = "noisefloor serve-sim listening on http://127.0.0.1:";
  ASSERT_EQ(line.rfind(prefix, 0), 0u) << line;
  ASSERT_GE(line.size(), prefix.size() + 4);
  EXPECT_EQ(line.substr(line.size() - 3), "/v1");
  const std::string base_url = line.substr(line.find("http://"));

  SimParams params{.seed = 13, .spread = 2.0, .parse_error_rate = 0.05};
  SimBackend sim(params);
  OpenAiOptions o;
  o.base_url = base_url;
  OpenAiBackend client(o);
  for (const auto& [stem, options] : testing::item_bank()) {
    for (int64_t seed : {0, 5}) {
      const ChatRequest req = testing::mcq_request(stem, options, 0.9, seed);
      const ChatResponse r = client.complete(req);
      ASSERT_EQ(r.kind, ResponseKind::kOk) << r.error;
      EXPECT_EQ(r.content, sim.complete(req).content);
    }
  }
  ASSERT_EQ(::kill(c.pid, SIGTERM), 0);
  EXPECT_EQ(wait_exit(c.pid), 0);
  EXPECT_EQ(read_all(c.out_fd), "");  // exactly one line on stdout
  ::close(c.out_fd);
}

TEST(ServeSimCli, PortInUseExitsThree) {
  require_binary();
  auto taken = SimServer::start(SimParams{});
  ASSERT_TRUE(taken.ok());
  Child c = spawn({"serve-sim", "--port", std::to_string((*taken)->port())});
  ASSERT_GT(c.pid, 0);
  EXPECT_EQ(wait_exit(c.pid), 3);
  EXPECT_EQ(read_all(c.out_fd), "");
  ::close(c.out_fd);
}

TEST(ServeSimCli, HelpTeachesAndBadFlagsAreUsageErrors) {
  require_binary();
  Child h = spawn({"serve-sim", "--help"});
  const std::string help = read_all(h.out_fd);
  ::close(h.out_fd);
  EXPECT_EQ(wait_exit(h.pid), 0);
  EXPECT_NE(help.find("base_url: http://127.0.0.1:"), std::string::npos) << help;
  EXPECT_NE(help.find("--parse-error-rate"), std::string::npos);
  Child bad = spawn({"serve-sim", "--parse-error-rate", "2"});
  ::close(bad.out_fd);
  EXPECT_EQ(wait_exit(bad.pid), 2);
}

}  // namespace
}  // namespace nf
