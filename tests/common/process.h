// Starting and killing a child noisefloor process in tests (serve-sim, SIGKILL tests).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

namespace nf::testing {

struct Child {
  pid_t pid = -1;
  int stdout_fd = -1;
};

/// fork+exec NF_BINARY with `args`; stdout is a pipe (read with read_line), stderr goes
/// to `stderr_path` (or /dev/null).
inline Child spawn(const std::vector<std::string>& args, const std::string& stderr_path = "/dev/null") {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    const int err = open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (err >= 0) dup2(err, 2);
    std::vector<char*> argv;
    std::string bin = NF_BINARY;
    argv.push_back(bin.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(bin.c_str(), argv.data());
    _exit(127);
  }
  close(fds[1]);
  return {pid, fds[0]};
}

/// Reads one line from the child's stdout (blocking).
inline std::string read_line(const Child& c) {
  std::string line;
  char ch;
  while (read(c.stdout_fd, &ch, 1) == 1) {
    if (ch == '\n') break;
    line += ch;
  }
  return line;
}

/// Starts `noisefloor serve-sim --port 0 FLAGS...` as `child` (stderr to `err`) and returns
/// the base URL it prints on its first line ("" if the line names none).
inline std::string start_sim(Child& child, const std::vector<std::string>& flags, const std::string& err) {
  std::vector<std::string> args{"serve-sim", "--port", "0"};
  args.insert(args.end(), flags.begin(), flags.end());
  child = spawn(args, err);
  const std::string line = read_line(child);
  const auto at = line.find("http://");
  return at == std::string::npos ? "" : line.substr(at);
}

/// Sends `sig` and reaps the child; returns its wait status.
inline int kill_and_wait(Child& c, int sig) {
  if (c.pid <= 0) return -1;
  kill(c.pid, sig);
  int st = 0;
  waitpid(c.pid, &st, 0);
  if (c.stdout_fd >= 0) close(c.stdout_fd);
  c.pid = -1;
  return st;
}

/// Waits for the child to exit; returns its exit code (128+signal if killed).
inline int wait_exit(Child& c) {
  int st = 0;
  waitpid(c.pid, &st, 0);
  if (c.stdout_fd >= 0) close(c.stdout_fd);
  c.pid = -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

}  // namespace nf::testing
