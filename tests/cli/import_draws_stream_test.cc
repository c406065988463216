// `noisefloor import draws` streams (issue 14 item 2): a bad row names file, line and
// column with exit code 2 and leaves no store behind when the command created it; a good
// file imports and analyzes; importing it again is refused and changes nothing.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/process.h"
#include "common/sqlite_file.h"
#include "common/test_data.h"
#include "store/store.h"

namespace nf {
namespace {

using testing::run_cli;
using testing::TempDir;

const char* kHeader = "subject,item,cluster,condition,config,replicate,outcome,value\n";

TEST(ImportDrawsStreamCli, BadRowNamesLineAndColumnAndLeavesNoNewStore) {
  TempDir d;
  testing::write_text(d / "bad.csv", std::string(kHeader) + "m,q1,c,none,default,0,correct,1\n"
                                                           "m,q1,c,none,default,x,correct,1\n");
  const auto r = run_cli("import draws " + d / "bad.csv" + " --store " + d / "new.sqlite", d.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("bad.csv:3: replicate: expected a non-negative integer, got 'x'"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(d / "new.sqlite"));
}

TEST(ImportDrawsStreamCli, ImportsAnalyzesAndRefusesASecondImport) {
  TempDir d;
  std::string csv = kHeader;
  for (int i = 0; i < 6; ++i)
    for (int r = 0; r < 4; ++r)
      csv += "m,q" + std::to_string(i) + ",c" + std::to_string(i / 2) + ",none,default," + std::to_string(r) +
             ",correct," + std::to_string((i * r) % 2) + "\n";
  testing::write_text(d / "d.csv", csv);
  const std::string store = d / "s.sqlite";
  auto r = run_cli("import draws " + d / "d.csv" + " --store " + store, d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("24 rows -> 24 draws of 6 items"), std::string::npos) << r.err;
  r = run_cli("analyze --store " + store + " --out " + d / "out" + " --analysis floor --resamples 50", d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_cli("import draws " + d / "d.csv" + " --store " + store, d.path());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("already stored"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::exists(store));  // an existing store is kept
  auto s = Store::open_existing(store);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*(*s)->draw_count(), 24);
}

// Values that would be imported as silently wrong numbers (issue 14 follow-up): each is
// exit 2 with FILE:LINE: value: ..., and nothing is written: a store the command created
// is removed, an existing store keeps exactly what it held.
TEST(ImportDrawsStreamCli, BadValuesExit2AndWriteNothing) {
  TempDir d;
  const std::string good_rows = "m,q1,c,none,default,0,correct,1\nm,q1,c,none,default,1,correct,0\n";
  testing::write_text(d / "good.csv", std::string(kHeader) + good_rows);
  const std::string existing = d / "existing.sqlite";
  ASSERT_EQ(run_cli("import draws " + d / "good.csv" + " --store " + existing, d.path()).exit_code, 0);
  const std::string jrow = R"({"subject":"m","item":"q2","condition":"none","config":"default","outcome":"correct",)";
  struct Case {
    std::string file, text, flags, error;
  };
  const std::vector<Case> cases{
      {"nan.csv", std::string(kHeader) + "m,q2,c,none,default,0,correct,nan\n", "",
       "nan.csv:2: value: 'nan' is not a finite number"},
      {"inf.csv", std::string(kHeader) + "m,q2,c,none,default,0,score,0.5\nm,q2,c,none,default,1,score,-inf\n", "",
       "inf.csv:3: value: '-inf' is not a finite number"},
      {"typo.csv",
       std::string(kHeader) + "m,q2,c,none,default,0,correct,1\nm,q2,c,none,default,1,correct,0\n"
                              "m,q2,c,none,default,2,correct,1O\n",
       "",
       "typo.csv:4: value: outcome 'correct' mixes numbers and non-numeric values: '1' on line 2 is a number, '1O' "
       "on line 4 is not (first of each)"},
      {"mixed.jsonl", jrow + R"("replicate":0,"value":"abc"})" + "\n" + jrow + R"("replicate":1,"value":0})" + "\n",
       "", "mixed.jsonl:2: value: outcome 'correct' mixes numbers and non-numeric values: '0' on line 2 is a number, "
           "'abc' on line 1 is not (first of each)"},
      {"two.csv", std::string(kHeader) + "m,q2,c,none,default,0,correct,1\nm,q2,c,none,default,1,correct,2\n",
       " --binary correct,parsed",
       "two.csv:3: value: outcome 'correct' is declared binary (--binary): expected 0, 1, true or false, got '2'"},
      {"undeclared.csv", std::string(kHeader) + "m,q2,c,none,default,0,correct,1\n", " --binary corect",
       "undeclared.csv: --binary: outcome 'corect' has no row in the file (outcomes: correct) (did you mean "
       "'correct'?)"},
      // Issue 15: labels that differ only by whitespace would be two categories.
      {"spaces.csv",
       std::string(kHeader) + "m,q2,c,none,default,0,answer,B\nm,q2,c,none,default,1,answer,A\n"
                              "m,q2,c,none,default,2,answer,B \n",
       "",
       "spaces.csv:4: value: outcome 'answer' has labels that differ only by surrounding whitespace: 'B' (first on "
       "line 2) and 'B ' (first on line 4)"},
      // Issue 15: an underflow would read as 0.
      {"tiny.csv", std::string(kHeader) + "m,q2,c,none,default,0,score,1e-400\n", "",
       "tiny.csv:2: value: '1e-400' is out of range: not zero, but below the smallest normal double"},
      {"tiny.jsonl", jrow + R"("replicate":0,"value":1e-400})" + "\n", "",
       "tiny.jsonl:1: value: '1e-400' is out of range"},
      // Issue 15: a repeated JSON key would keep only the last value.
      {"twice.jsonl", jrow + R"("replicate":0,"value":1,"value":0})" + "\n", "",
       "twice.jsonl:1: value: the key appears twice in one object"},
      // Issue 15: a file without rows is not an empty import.
      {"header.csv", kHeader, "", "header.csv: no rows (the header is the only record): nothing to import"},
      {"blank.jsonl", "\n", "", "blank.jsonl: no rows"},
      {"nobinary.csv", std::string(kHeader) + "m,q2,c,none,default,0,correct,1\n", " --binary ''",
       "--binary: an empty outcome name"},
  };
  for (const auto& c : cases) {
    testing::write_text(d / c.file, c.text);
    auto r = run_cli("import draws " + d / c.file + " --store " + d / "new.sqlite" + c.flags, d.path());
    EXPECT_EQ(r.exit_code, 2) << c.file << "\n" << r.err;
    EXPECT_NE(r.err.find(c.error), std::string::npos) << c.file << "\n" << r.err;
    EXPECT_FALSE(std::filesystem::exists(d / "new.sqlite")) << c.file;
    r = run_cli("import draws " + d / c.file + " --store " + existing + c.flags, d.path());
    EXPECT_EQ(r.exit_code, 2) << c.file << "\n" << r.err;
    auto s = Store::open_existing(existing);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(*(*s)->draw_count(), 2) << c.file;
    auto rows = (*s)->outcome_rows();
    ASSERT_TRUE(rows.ok());
    EXPECT_EQ(rows->size(), 2u) << c.file;
  }
}

// A failed import into a store in folders that did not exist removes the folders it
// created too (issue 15), but never a folder that was there before.
TEST(ImportDrawsStreamCli, AFailedImportRemovesTheFoldersItCreated) {
  TempDir d;
  testing::write_text(d / "bad.csv", std::string(kHeader) + "m,q1,c,none,default,0,correct,nan\n");
  std::filesystem::create_directories(d / "kept");
  auto r = run_cli("import draws " + d / "bad.csv" + " --store " + d / "kept/a/b/s.sqlite", d.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("bad.csv:2: value: 'nan'"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::is_directory(d / "kept"));
  EXPECT_FALSE(std::filesystem::exists(d / "kept/a"));
  // A good import keeps them.
  testing::write_text(d / "good.csv", std::string(kHeader) + "m,q1,c,none,default,0,correct,1\n");
  r = run_cli("import draws " + d / "good.csv" + " --store " + d / "kept/a/b/s.sqlite", d.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(d / "kept/a/b/s.sqlite"));
}

// Starts `import draws FIFO --store STORE`, feeds it the header and one row through the
// FIFO (so the import is certainly in progress, waiting for more), sends `sig` and
// returns the exit code (128 + signal when the signal ended it).
int interrupted_import(const TempDir& d, const std::string& store, int sig, std::string* err) {
  const std::string fifo = d / "feed.csv";
  std::filesystem::remove(fifo);
  if (mkfifo(fifo.c_str(), 0600) != 0) return -1;
  testing::Child child = testing::spawn({"import", "draws", fifo, "--store", store}, d / "child-stderr.txt");
  int fd = -1;  // opening the write end succeeds once the import opened the read end
  for (int i = 0; i < 1000 && fd < 0; ++i) {
    fd = open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd < 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (fd < 0) {
    testing::kill_and_wait(child, SIGKILL);
    return -1;
  }
  const std::string text = std::string(kHeader) + "m,q9,c,none,default,0,correct,1\n";
  if (write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) return -1;
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the row is read and written meanwhile
  kill(child.pid, sig);
  const int rc = testing::wait_exit(child);
  close(fd);
  *err = testing::slurp(d / "child-stderr.txt");
  return rc;
}

// SIGINT or SIGTERM during an import into a store the command creates leaves nothing:
// no store file, no -wal/-shm, no folder it created (issue 15). An existing store keeps
// exactly what it had.
TEST(ImportDrawsStreamCli, AnInterruptedImportLeavesNothingBehind) {
  TempDir d;
  for (int sig : {SIGINT, SIGTERM}) {
    std::string err;
    const int rc = interrupted_import(d, d / "new/sub/s.sqlite", sig, &err);
    EXPECT_EQ(rc, 128 + sig) << err;
    EXPECT_NE(err.find("noisefloor import: interrupted; removed the store it was creating"), std::string::npos) << err;
    EXPECT_FALSE(std::filesystem::exists(d / "new")) << sig;
  }
  testing::write_text(d / "good.csv", std::string(kHeader) + "m,q1,c,none,default,0,correct,1\n"
                                                             "m,q1,c,none,default,1,correct,0\n");
  const std::string existing = d / "existing.sqlite";
  ASSERT_EQ(run_cli("import draws " + d / "good.csv" + " --store " + existing, d.path()).exit_code, 0);
  std::string err;
  EXPECT_EQ(interrupted_import(d, existing, SIGTERM, &err), 128 + SIGTERM) << err;
  auto s = Store::open_existing(existing);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(*(*s)->draw_count(), 2);
  auto rows = (*s)->outcome_rows();
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), 2u);
}

// An import into a store without draws runs with a rollback journal (issue 14, store.cc
// use_rollback_journal) instead of the write-ahead log: killed with SIGKILL (which no
// handler sees) after its pages began to reach the file, it leaves the store and a hot
// journal, and the next open rolls the import back: no draw, WAL mode again.
TEST(ImportDrawsStreamCli, AKilledImportIsRolledBack) {
  TempDir d;
  const std::string fifo = d / "feed.csv";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string store = d / "s.sqlite";
  testing::Child child = testing::spawn({"import", "draws", fifo, "--store", store}, d / "child-stderr.txt");
  int fd = -1;
  for (int i = 0; i < 1000 && fd < 0; ++i) {
    fd = open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd < 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GE(fd, 0);
  ASSERT_EQ(fcntl(fd, F_SETFL, 0), 0);  // blocking writes from here
  std::string text = kHeader;
  for (int i = 0; i < 5000; ++i)  // 50,000 draws: about 8 MB of store
    for (int r = 0; r < 10; ++r) text += "m,q" + std::to_string(i) + ",,none,default," + std::to_string(r) + ",o,1\n";
  for (size_t off = 0; off < text.size();) {
    const ssize_t n = write(fd, text.data() + off, text.size() - off);
    ASSERT_GT(n, 0);
    off += static_cast<size_t>(n);
  }
  // The import's pages spill into the file once they outgrow SQLite's page cache (2 MB).
  std::error_code ec;
  for (int i = 0; i < 1000 && !(std::filesystem::exists(store + "-journal") &&
                                 std::filesystem::file_size(store, ec) > (3u << 20));
       ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(std::filesystem::exists(store + "-journal")) << testing::slurp(d / "child-stderr.txt");
  EXPECT_GT(std::filesystem::file_size(store, ec), 3u << 20);
  testing::kill_and_wait(child, SIGKILL);
  close(fd);
  {
    auto s = Store::open_existing(store);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    EXPECT_EQ(*(*s)->draw_count(), 0);
    auto items = (*s)->items();
    ASSERT_TRUE(items.ok());
    EXPECT_TRUE(items->empty());
  }
  EXPECT_FALSE(std::filesystem::exists(store + "-journal"));
  EXPECT_EQ(testing::journal_mode(store), "wal");
  // The same file imports completely into that store.
  testing::write_text(d / "full.csv", text);
  const auto r = run_cli("import draws " + d / "full.csv" + " --store " + store, d.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto s = Store::open_existing(store);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*(*s)->draw_count(), 50000);
}

// A store whose file and folder are read-only (chmod a-w) is analyzed, checked and
// exported read-only (issue 15: "set WAL mode: attempt to write a readonly database");
// a command that writes names the file. Root ignores file modes, so as root the commands
// run as user nobody (setpriv).
TEST(ImportDrawsStreamCli, AReadOnlyStoreCanBeReadButNotWritten) {
  TempDir d;
  std::string as_reader;  // the prefix that runs a command without write access
  if (geteuid() == 0) {
    if (std::system("command -v setpriv >/dev/null 2>&1") != 0) GTEST_SKIP() << "root without setpriv";
    as_reader = "setpriv --reuid=65534 --regid=65534 --clear-groups";
  }
  std::string csv = kHeader;
  for (int i = 0; i < 6; ++i)
    for (int r = 0; r < 3; ++r)
      csv += "m,q" + std::to_string(i) + ",c" + std::to_string(i / 2) + ",none,default," + std::to_string(r) +
             ",correct," + std::to_string((i * r) % 2) + "\n";
  testing::write_text(d / "d.csv", csv);
  std::filesystem::create_directories(d / "ro");
  std::filesystem::create_directories(d / "out");
  const std::string store = d / "ro/s.sqlite";
  ASSERT_EQ(run_cli("import draws " + d / "d.csv" + " --store " + store, d.path()).exit_code, 0);
  const std::string before = testing::slurp(store);
  namespace fs = std::filesystem;
  fs::permissions(d.path(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                fs::perms::others_read | fs::perms::others_exec);
  if (geteuid() == 0) {
    ASSERT_EQ(std::system(("chown -R 65534 '" + d / "ro" + "' '" + d / "out" + "'").c_str()), 0);
  }
  fs::permissions(store, fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                  fs::perm_options::remove);
  fs::permissions(d / "ro", fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                  fs::perm_options::remove);
  auto e = run_cli("export --store " + store + " --format csv --out " + d / "out/draws.csv", d.path(), as_reader);
  EXPECT_EQ(e.exit_code, 0) << e.err;
  EXPECT_EQ(testing::slurp(d / "out/draws.csv").substr(0, 55),
            "subject,item,cluster,condition,config,replicate,status,");
  auto a = run_cli("analyze --store " + store + " --out " + d / "out" + " --analysis floor --resamples 50", d.path(),
                   as_reader);
  EXPECT_EQ(a.exit_code, 0) << a.err;
  EXPECT_TRUE(fs::exists(d / "out/results.json"));
  auto c = run_cli("check --store " + store + " --max-pooled-floor 1", d.path(), as_reader);
  EXPECT_EQ(c.exit_code, 0) << c.err;
  auto w = run_cli("import draws " + d / "d.csv" + " --store " + store, d.path(), as_reader);
  EXPECT_EQ(w.exit_code, 2) << w.err;
  EXPECT_NE(w.err.find("store " + store + ": the file is not writable, and this command writes to the store"),
            std::string::npos)
      << w.err;
  EXPECT_EQ(testing::slurp(store), before);  // not a byte changed
  EXPECT_FALSE(fs::exists(store + "-wal"));
  fs::permissions(d / "ro", fs::perms::owner_write, fs::perm_options::add);  // so TempDir can remove it
}

TEST(ImportDrawsStreamCli, NearlyBinaryOutcomeWarnsUnlessDeclaredBinary) {
  TempDir d;
  std::string csv = kHeader;
  for (int i = 0; i < 20; ++i) csv += "m,q" + std::to_string(i) + ",,none,default,0,correct," + std::to_string(i % 2) + "\n";
  csv += "m,q20,,none,default,0,correct,-1\n";  // line 22
  testing::write_text(d / "d.csv", csv);
  auto r = run_cli("import draws " + d / "d.csv" + " --store " + d / "s.sqlite", d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("import: warning: " + d / "d.csv" +
                       ": value: outcome 'correct' looks binary but 1 of its 21 values are not 0/1: -1 (1 row, first "
                       "on line 22); they are imported as written and enter its means (fix them, or import with "
                       "--binary correct to refuse them)\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("21 rows -> 21 draws of 21 items"), std::string::npos) << r.err;
  r = run_cli("import draws " + d / "d.csv" + " --store " + d / "b.sqlite" + " --binary correct", d.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("d.csv:22: value: outcome 'correct' is declared binary (--binary): expected 0, 1, true or "
                       "false, got '-1'"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(d / "b.sqlite"));
  r = run_cli("import votes " + d / "d.csv" + " --store " + d / "v.sqlite" + " --binary correct", d.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--binary: only for `import draws`"), std::string::npos) << r.err;
}

// Issue 19: key values that differ only by surrounding whitespace ("q1", "q1 ") would be
// two items and a floor over twice the items: exit 2 naming file, both lines and both
// spellings, in CSV and JSONL, nothing written. A case-only twin is a warning (exit 0).
// The same for `import votes` and `import labels`, whose case warnings are printed too.
TEST(ImportDrawsStreamCli, KeyValuesDifferingOnlyByWhitespaceExit2AndWriteNothing) {
  TempDir d;
  const std::string jrow = R"({"subject":"m","condition":"none","config":"default","outcome":"correct",)";
  struct Case {
    std::string file, text, error;
  };
  const std::vector<Case> cases{
      {"item.csv", std::string(kHeader) + "m,q1,,none,default,0,correct,1\nm,q2,,none,default,0,correct,0\n"
                                          "m,q1 ,,none,default,0,correct,1\n",
       "item.csv:4: item: values that differ only by surrounding whitespace: 'q1' (first on line 2) and 'q1 ' (first "
       "on line 4); they would be two items: remove the spaces\n"},
      {"item.jsonl", jrow + R"("item":"q1","replicate":0,"value":1})" + "\n" + jrow +
                         R"("item":"\tq1","replicate":0,"value":1})" + "\n",
       "item.jsonl:2: item: values that differ only by surrounding whitespace: 'q1' (first on line 1) and '\\tq1' "
       "(first on line 2); they would be two items: remove the spaces\n"},
      {"config.csv", std::string(kHeader) + "m,q1,,none,,0,correct,1\nm,q1,,none,default ,1,correct,0\n",
       "config.csv:3: config: values that differ only by surrounding whitespace: 'default' (first on line 2) and "
       "'default ' (first on line 3)"},
  };
  for (const auto& c : cases) {
    testing::write_text(d / c.file, c.text);
    auto r = run_cli("import draws " + d / c.file + " --store " + d / "new.sqlite", d.path());
    EXPECT_EQ(r.exit_code, 2) << c.file << "\n" << r.err;
    EXPECT_NE(r.err.find(c.error), std::string::npos) << c.file << "\n" << r.err;
    EXPECT_FALSE(std::filesystem::exists(d / "new.sqlite")) << c.file;
  }
  testing::write_text(d / "case.csv", std::string(kHeader) + "GPT-4o,q1,,none,default,0,correct,1\n"
                                                             "gpt-4o,q1,,none,default,0,correct,1\n");
  auto r = run_cli("import draws " + d / "case.csv" + " --store " + d / "case.sqlite", d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("import: warning: " + d / "case.csv" +
                       ": subject: values that differ only by letter case: 'GPT-4o' (first on line 2) and 'gpt-4o' "
                       "(first on line 3); they are imported as two subjects (fix the spelling if they are one)\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("2 rows -> 2 draws of 1 items"), std::string::npos) << r.err;

  testing::write_text(d / "v.csv", "subject,subject_provider,item,cluster,judge,judge_provider,label\n"
                                   "s,p,i1,,j,p,1\ns,p,i1,,J,p,0\n");
  r = run_cli("import votes " + d / "v.csv" + " --store " + d / "v.sqlite", d.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("import: warning: " + d / "v.csv" + ": judge: values that differ only by letter case: 'j' "
                                                            "(first on line 2) and 'J' (first on line 3)"),
            std::string::npos)
      << r.err;
  testing::write_text(d / "w.csv", "subject,subject_provider,item,cluster,judge,judge_provider,label\n"
                                   "s,p,i1,,j,p,1\ns,p,i1 ,,j,p,0\n");
  r = run_cli("import votes " + d / "w.csv" + " --store " + d / "w.sqlite", d.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("w.csv:3: item: values that differ only by surrounding whitespace: 'i1' (first on line 2) "
                       "and 'i1 ' (first on line 3); they would be two items: remove the spaces"),
            std::string::npos)
      << r.err;
  testing::write_text(d / "l.csv", "rater,subject,item,label\nO,s,i1,1\nO,s ,i1,0\n");
  r = run_cli("import labels " + d / "l.csv" + " --store " + d / "l.sqlite", d.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("l.csv:3: subject: values that differ only by surrounding whitespace: 's' (first on line 2) "
                       "and 's ' (first on line 3); they would be two subjects: remove the spaces"),
            std::string::npos)
      << r.err;
}

// `import --help` says which draws columns are required and gives an example that runs
// as printed: its three CSV lines are read from the help text itself.
TEST(ImportDrawsStreamCli, HelpNamesRequiredColumnsAndItsExampleRuns) {
  TempDir d;
  const auto h = run_cli("import --help", d.path());
  ASSERT_EQ(h.exit_code, 0) << h.err;
  EXPECT_NE(h.out.find("required columns: subject,item,condition,config,replicate,outcome,value"), std::string::npos)
      << h.out;
  EXPECT_NE(h.out.find("optional columns: cluster (empty or absent = the item), label, status"), std::string::npos);
  const std::string marker = "Example: draws.csv holding the three lines\n";
  const size_t at = h.out.find(marker);
  ASSERT_NE(at, std::string::npos) << h.out;
  std::istringstream in(h.out.substr(at + marker.size()));
  std::string csv, line, command;
  for (int i = 0; i < 3 && std::getline(in, line); ++i) csv += line.substr(line.find_first_not_of(' ')) + "\n";
  ASSERT_TRUE(std::getline(in, command));
  command = command.substr(command.find_first_not_of(' '));
  ASSERT_EQ(command.rfind("noisefloor import draws draws.csv --store S.sqlite", 0), 0u) << command;
  testing::write_text(d / "draws.csv", csv);
  // As printed, in the folder holding draws.csv.
  const auto r = run_cli(command.substr(std::string("noisefloor ").size()), d.path(), "cd '" + d.path() + "' &&");
  ASSERT_EQ(r.exit_code, 0) << csv << r.err;
  EXPECT_NE(r.err.find("2 rows -> 2 draws of 1 items"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::exists(d / "S.sqlite"));
}

}  // namespace
}  // namespace nf
