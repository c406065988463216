// util/file.h read_file: whole files byte for byte (sizes around the buffer's edges,
// NUL bytes, no trailing newline), non-regular files read to EOF, and the errors.
#include "util/file.h"
#include "util/hash.h"
#include "util/output_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace nf {
namespace {

class ReadFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("nf-read-file-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& bytes) {
    const std::string path = (dir_ / name).string();
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return path;
  }

  std::filesystem::path dir_;
};

TEST_F(ReadFile, ReturnsEveryByteForSizesAroundBufferEdges) {
  std::mt19937 gen(7);
  for (size_t n : {size_t{0}, size_t{1}, size_t{4095}, size_t{4096}, size_t{4097}, size_t{65536},
                   size_t{2 * 1024 * 1024 + 3}}) {
    std::string bytes(n, '\0');
    for (auto& c : bytes) c = static_cast<char>(gen() & 0xff);  // NUL and high bytes included
    const std::string path = write("f" + std::to_string(n), bytes);
    auto got = read_file(path);
    ASSERT_TRUE(got.ok()) << got.status().message();
    EXPECT_EQ(got->size(), n);
    EXPECT_TRUE(*got == bytes) << "size " << n;
  }
}

TEST_F(ReadFile, KeepsALastLineWithoutNewline) {
  const std::string path = write("t.jsonl", "{\"a\": 1}\n{\"b\": 2}");
  auto got = read_file(path);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, "{\"a\": 1}\n{\"b\": 2}");
}

TEST_F(ReadFile, ReadsANonRegularFileToEof) {
  // A FIFO has no size to pre-size the buffer from: the reader grows it until EOF.
  const std::string path = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  const std::string bytes(100000, 'x');
  std::thread writer([&] {
    std::ofstream out(path, std::ios::binary);
    out << bytes;
  });
  auto got = read_file(path);
  writer.join();
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(*got, bytes);
}

TEST_F(ReadFile, MissingFileIsNotFoundNamingThePath) {
  const std::string path = (dir_ / "nope.jsonl").string();
  auto got = read_file(path);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kNotFound);
  EXPECT_NE(got.status().message().find(path), std::string::npos);
}

TEST_F(ReadFile, DirectoryIsInvalidArgumentNamingThePath) {
  auto got = read_file(dir_.string());
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(got.status().message().find("is a directory"), std::string::npos);
  EXPECT_NE(got.status().message().find(dir_.string()), std::string::npos);
}

TEST_F(ReadFile, FileSha256IsTheHashOfItsBytes) {
  // The reference: sha256_hex of the whole file read at once, and a fixed vector.
  EXPECT_EQ(*sha256_file_hex(write("abc", "abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");  // FIPS 180-2 B.1
  std::mt19937 gen(11);
  for (size_t n : {size_t{0}, size_t{65535}, size_t{65536}, size_t{65537}, size_t{300001}}) {
    std::string bytes(n, '\0');
    for (auto& c : bytes) c = static_cast<char>(gen() & 0xff);
    const std::string path = write("h" + std::to_string(n), bytes);
    auto got = sha256_file_hex(path);
    ASSERT_TRUE(got.ok()) << got.status().message();
    EXPECT_EQ(*got, sha256_hex(bytes)) << "size " << n;
  }
  auto missing = sha256_file_hex((dir_ / "nope").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  auto directory = sha256_file_hex(dir_.string());
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.status().code(), StatusCode::kInvalidArgument);
}

// Tester finding 22.4 (session 9): a failed write left a 0-byte `report.html.tmp` behind.
// An AtomicOutputFile that fails (here: the rename onto a directory) or is abandoned
// removes its temporary; a good one leaves exactly the file.
TEST_F(ReadFile, AtomicOutputFileLeavesNoTemporaryOnFailureOrAbandon) {
  const std::filesystem::path target = dir_ / "out.csv";
  std::filesystem::create_directories(target);  // rename(out.csv.tmp, out.csv) must fail
  {
    AtomicOutputFile f(target.string());
    ASSERT_TRUE(f.open().ok());
    f.out() << "a,b\n";
    const Status st = f.commit();
    EXPECT_EQ(st.code(), StatusCode::kDataLoss) << st.to_string();
    EXPECT_NE(st.message().find("rename failed"), std::string::npos) << st.message();
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ / "out.csv.tmp"));
  {
    AtomicOutputFile f((dir_ / "abandoned.csv").string());
    ASSERT_TRUE(f.open().ok());
    f.out() << "half";
    EXPECT_TRUE(std::filesystem::exists(dir_ / "abandoned.csv.tmp"));
  }  // destroyed without commit(): an error path
  EXPECT_FALSE(std::filesystem::exists(dir_ / "abandoned.csv.tmp"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "abandoned.csv"));
  ASSERT_TRUE(write_file_atomic((dir_ / "good.txt").string(), "x").ok());
  EXPECT_TRUE(std::filesystem::exists(dir_ / "good.txt"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "good.txt.tmp"));
}

}  // namespace
}  // namespace nf
