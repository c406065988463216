// Read commands never create a store (issue 31 item 3): `analyze`, `export` and `check`
// (and `judge`, which only adds votes to a store) given a path where no store is, or a
// 0-byte file, turned it into a new empty store and analyzed that ("imported votes or
// labels only"). They now refuse, naming the path and what is wrong, exit 2, and leave the
// path as it was. A real store that holds nothing to analyze is refused by `analyze` with
// what it does hold.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "common/test_data.h"
#include "store/store.h"

namespace nf {
namespace {

using testing::CmdResult;
using testing::run_cli;
using testing::TempDir;
using testing::write_text;

struct ReadCommand {
  std::string name, args;  // args: with STORE where the store goes
};

std::vector<ReadCommand> read_commands(const TempDir& d) {
  return {{"analyze", "analyze --store STORE --out " + d / "out"},
          {"export", "export --store STORE --format csv"},
          {"check", "check --store STORE --max-pooled-floor 0.5"}};
}

std::string with_store(std::string args, const std::string& store) {
  return args.replace(args.find("STORE"), 5, store);
}

TEST(ReadCommandsOpen, MissingPathIsNoSuchStoreAndStaysMissing) {
  TempDir d;
  const std::string store = d / "typo.sqlite";
  for (const auto& c : read_commands(d)) {
    const CmdResult r = run_cli(with_store(c.args, store), d.path());
    EXPECT_EQ(r.exit_code, 2) << c.name << ": " << r.err;
    EXPECT_NE(r.err.find("noisefloor " + c.name + ": store " + store + ": no such store (no such file;"),
              std::string::npos)
        << c.name << ": " << r.err;
    EXPECT_FALSE(std::filesystem::exists(store)) << c.name;
  }
}

TEST(ReadCommandsOpen, EmptyFileIsNotAStoreAndStaysEmpty) {
  TempDir d;
  const std::string store = d / "empty.sqlite";
  write_text(store, "");
  for (const auto& c : read_commands(d)) {
    const CmdResult r = run_cli(with_store(c.args, store), d.path());
    EXPECT_EQ(r.exit_code, 2) << c.name << ": " << r.err;
    EXPECT_NE(r.err.find("store " + store + " is not a noisefloor store: empty file (0 bytes)"), std::string::npos)
        << c.name << ": " << r.err;
    EXPECT_EQ(std::filesystem::file_size(store), 0u) << c.name;
    EXPECT_FALSE(std::filesystem::exists(store + "-wal")) << c.name;
  }
  // judge writes votes into a store but never creates one either.
  write_text(d / "judges.yaml", "name: j\ntask: chat\nstore: " + store +
                                    "\njudge:\n  panel:\n    - {name: a, backend: sim, model: sim-a}\n");
  const CmdResult j = run_cli("judge " + d / "judges.yaml" + " --quiet", d.path());
  EXPECT_EQ(j.exit_code, 2) << j.err;
  EXPECT_NE(j.err.find("store " + store + " is not a noisefloor store: empty file (0 bytes)"), std::string::npos)
      << j.err;
  EXPECT_EQ(std::filesystem::file_size(store), 0u);
}

TEST(ReadCommandsOpen, AnalyzeOfAStoreWithNothingToAnalyzeSaysWhatItHolds) {
  TempDir d;
  const std::string bare = d / "bare.sqlite", recorded = d / "recorded.sqlite";
  { ASSERT_TRUE(Store::open(bare).ok()); }  // a schema and nothing else
  {
    auto s = Store::open(recorded);  // what a run that stopped before its first draw leaves
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE((*s)->put_study(StudyRecord{"floor-study", "abc", 1, {{"name", "floor-study"}, {"replicates", 3}}}).ok());
    ASSERT_TRUE((*s)->put_item("q1", "q1", {{"question", "?"}}).ok());
    ASSERT_TRUE((*s)->put_item("q2", "q2", {{"question", "?"}}).ok());
  }
  const CmdResult r1 = run_cli("analyze --store " + bare + " --out " + d / "o1", d.path());
  EXPECT_EQ(r1.exit_code, 2) << r1.err;
  EXPECT_NE(r1.err.find("store " + bare + " holds no draws, no judge votes and no human labels: nothing to analyze. "
                        "It holds nothing at all: it is empty."),
            std::string::npos)
      << r1.err;
  EXPECT_EQ(r1.err.find("votes or labels only"), std::string::npos) << r1.err;
  EXPECT_FALSE(std::filesystem::exists(d / "o1/report.md"));
  const CmdResult r2 = run_cli("analyze --store " + recorded + " --out " + d / "o2", d.path());
  EXPECT_EQ(r2.exit_code, 2) << r2.err;
  EXPECT_NE(r2.err.find("It holds only the record of study 'floor-study' and 2 items (a run that stopped before its "
                        "first draw was stored?)"),
            std::string::npos)
      << r2.err;
}

}  // namespace
}  // namespace nf
