// RapidCheck properties whose number of cases is the test's own, and
// gtest comparisons that fail a RapidCheck case (so that it shrinks).
//
// RC_GTEST_PROP takes its number of cases from RC_PARAMS (max_success,
// default 100, and CI pins it): a property that promises ">= 1000 values"
// states that here instead, in the test, where RC_PARAMS cannot lower it.
// RC_PARAMS still gives the seed, so a failure reproduces with
// RC_PARAMS="seed=N" as rapidcheck prints it.
#pragma once

#include <cstddef>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>

namespace xackly::testing {

// Checks `property` (a callable as rc::check takes it: its body draws with
// *gen and asserts with RC_ASSERT) over exactly `cases` generated cases,
// whatever RC_PARAMS's max_success says. A failure fails the current gtest
// test with rapidcheck's report of the shrunk case.
// A sanitizer build (XACKLY_SANITIZED) runs cases / 10 of them.
// REQUIRES: called inside a gtest test body; cases >= 1.
template <typename Property>
void CheckCases(int cases, Property&& property) {
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  rc::detail::TestMetadata metadata;
  metadata.id = std::string(test->test_suite_name()) + "/" + test->name();
  metadata.description = test->name();
  rc::detail::TestParams params = rc::detail::configuration().testParams;
#ifdef XACKLY_SANITIZED  // tests/CMakeLists.txt: the sanitizer build runs a tenth
  params.maxSuccess = cases >= 10 ? cases / 10 : cases;
#else
  params.maxSuccess = cases;
#endif
  const rc::detail::TestResult result =
      rc::detail::checkTestable(std::forward<Property>(property), metadata, params);
  if (!result.template is<rc::detail::SuccessResult>()) {
    std::ostringstream report;
    rc::detail::printResultMessage(result, report);
    ADD_FAILURE() << report.str();
  }
}

// Runs `expectations` (gtest EXPECT_/ASSERT_ calls, e.g. a field-by-field
// comparison that table tests share) and fails the current RapidCheck case
// with every message they reported, instead of failing the gtest test once
// per generated case: one comparison serves both, and the case shrinks.
// REQUIRES: called inside a RapidCheck property.
template <typename Expectations>
void RcAssertExpectations(Expectations&& expectations) {
  ::testing::TestPartResultArray failures;
  {
    ::testing::ScopedFakeTestPartResultReporter capture(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
    std::forward<Expectations>(expectations)();
  }
  std::string messages;
  for (int i = 0; i < failures.size(); ++i) {
    if (failures.GetTestPartResult(i).failed()) messages += failures.GetTestPartResult(i).message() + std::string("\n");
  }
  if (!messages.empty()) RC_FAIL(messages);
}

// --- Generators every property shares ------------------------------------

// 0..max elements of `gen`: generated models stay small, so that a thousand
// of them take a second or two.
template <typename T>
rc::Gen<std::vector<T>> Few(rc::Gen<T> gen, size_t max = 4) {
  return rc::gen::mapcat(rc::gen::inRange<size_t>(0, max + 1),
                         [gen](size_t n) { return rc::gen::container<std::vector<T>>(n, gen); });
}

// One value of the enum E, 0..last.
template <typename E>
rc::Gen<E> AnyOf(E last) {
  return rc::gen::cast<E>(rc::gen::inRange(0, static_cast<int>(last) + 1));
}

// Free text as descriptions and reports carry it: valid UTF-8 without NUL,
// with what every format must escape (quotes, backslashes, control
// characters, TOML multi-line quotes, a comment sign, C1, a line separator
// and an astral character), up to 12 pieces.
inline rc::Gen<std::string> AnyText() {
  static const std::vector<std::string> kPieces = {
      "a", "Z", "0", " ", "order:1", "1-0", "\"", "'", "\\", "<", "&", "\t", "\n", "\r", "\x01", "\x1b[31m",
      "\x7f", "\xc2\x9b", "\xc3\xa9", "\xe2\x9c\x93", "\xf0\x9d\x84\x9e", "\u2028", "null", "{}", "\"\"\"", "'''",
      "#"};
  return rc::gen::map(Few(rc::gen::elementOf(kPieces), 12), [](const std::vector<std::string>& pieces) {
    std::string text;
    for (const std::string& piece : pieces) text += piece;
    return text;
  });
}

}  // namespace xackly::testing
