// Load-generator pieces on hand-made inputs: chunk reading, percentiles and goodput, the Pareto
// frontier, Prometheus parsing, workloads (deterministic, Mooncake text reuse follows hash ids),
// and one run against the in-process stub endpoint over real loopback HTTP.
#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "http/server.h"
#include "loadgen/pareto.h"
#include "loadgen/runner.h"
#include "loadgen/server_metrics.h"
#include "loadgen/stub_endpoint.h"
#include "loadgen/summary.h"

namespace k3::loadgen {
namespace {

TEST(ReadChunk, TimesTextEventsAndReadsUsage) {
  RequestRecord r;
  r.start_s = 1.0;
  EXPECT_TRUE(ReadChunk("data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n", 1.1, &r));
  EXPECT_EQ(r.first_token_s, -1);  // no text yet
  EXPECT_TRUE(ReadChunk("data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n", 1.5, &r));
  EXPECT_TRUE(
      ReadChunk("data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"b\"}}]}\n\n", 1.6, &r));
  EXPECT_TRUE(
      ReadChunk("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":"
                "3,\"prompt_tokens_details\":{\"cached_tokens\":4}}}\n\n",
                1.7, &r));
  EXPECT_TRUE(ReadChunk("data: [DONE]\n\n", 1.8, &r));
  EXPECT_DOUBLE_EQ(r.ttft(), 0.5);
  ASSERT_EQ(r.gaps_s.size(), 1u);
  EXPECT_NEAR(r.gaps_s[0], 0.1, 1e-12);
  EXPECT_EQ(r.reply, "a");
  EXPECT_EQ(r.prompt_tokens, 9);
  EXPECT_EQ(r.output_tokens, 3);
  EXPECT_EQ(r.cached_tokens, 4);
  EXPECT_FALSE(ReadChunk("data: {\"error\":{\"message\":\"x\"}}\n\n", 2, &r));
  EXPECT_EQ(r.error, "stream_error");
  RequestRecord bad;
  EXPECT_FALSE(ReadChunk("data: {not json\n\n", 1, &bad));
  EXPECT_EQ(bad.error, "bad_chunk");
  RequestRecord odd;  // wrong types are ignored, never thrown
  EXPECT_TRUE(
      ReadChunk("data: {\"choices\":[1,{\"delta\":{\"content\":5}}],\"usage\":{"
                "\"prompt_tokens\":\"x\"}}\n\n",
                1, &odd));
  EXPECT_EQ(odd.prompt_tokens, 0);
}

TEST(Summary, PercentilesGoodputAndErrors) {
  RunResult run;
  run.duration_s = 10;
  for (int i = 1; i <= 100; ++i) {
    RequestRecord r;
    r.start_s = 0;
    r.first_token_s = i / 1000.0;  // TTFT i ms
    r.end_s = 1;
    r.output_tokens = 11;
    r.text_events = 11;
    run.records.push_back(r);
  }
  RequestRecord failed;
  failed.error = "http_503";
  run.records.push_back(failed);
  const Summary s = Summarize(run, Slo{50, 0, 0});
  EXPECT_EQ(s.completed, 100);
  EXPECT_EQ(s.failed, 1);
  EXPECT_EQ(s.errors.at("http_503"), 1);
  EXPECT_NEAR(s.ttft.p50, 50.5, 1e-9);
  EXPECT_NEAR(s.ttft.p99, 99.01, 1e-9);
  EXPECT_EQ(s.ttft.max, 100);
  EXPECT_NEAR(s.goodput, 5.0, 1e-12);  // TTFT <= 50 ms: 50 requests in 10 s
  EXPECT_NEAR(s.tpot.p50, (1 - 0.0505) / 10 * 1e3, 1e-6);
  EXPECT_NEAR(s.output_tokens_per_s, 110, 1e-9);
}

TEST(Pareto, FrontierAndRecommendation) {
  const std::vector<SweepPoint> points = {{"a", 100, 50, 10},
                                          {"b", 200, 80, 20},
                                          {"c", 150, 90, 30},  // dominated by b
                                          {"d", 300, 400, 15},
                                          {"e", 999, 1, 1, true}};  // failed
  EXPECT_EQ(ParetoFrontier(points), (std::vector<size_t>{0, 1, 3}));
  EXPECT_EQ(Recommend(points, 100, 0), 1u);
  EXPECT_EQ(Recommend(points, 0, 12), 0u);
  EXPECT_FALSE(Recommend(points, 10, 0).has_value());
}

TEST(ServerMetrics, SumsSeriesAndComputesHitRate) {
  const auto before = ParsePrometheus(
      "# HELP x\nk3_prompt_tokens_total{endpoint=\"a\"} 10\nk3_prompt_tokens_total{endpoint=\"b\"} "
      "5\nk3_prefix_cache_hit_tokens_total 3\n");
  EXPECT_EQ(before.at("k3_prompt_tokens_total"), 15);
  const auto after =
      ParsePrometheus("k3_prompt_tokens_total 115\nk3_prefix_cache_hit_tokens_total 53\n");
  EXPECT_NEAR(*ServerHitRate(before, after), 0.5, 1e-12);
  EXPECT_FALSE(ServerHitRate({}, {}).has_value());
}

TEST(Workload, DeterministicAndMooncakeTextFollowsHashIds) {
  EXPECT_EQ(Words(7, 20), Words(7, 20));
  EXPECT_NE(Words(7, 20), Words(8, 20));
  const Workload multi = MultiTurnWorkload({3, 4, 50, 10, 8, 1});
  EXPECT_EQ(multi.requests(), 12);
  const std::string path = ::testing::TempDir() + "/trace.jsonl";
  std::ofstream(path)
      << R"({"timestamp": 0, "input_length": 1024, "output_length": 5, "hash_ids": [1, 2]})"
      << "\n"
      << R"({"timestamp": 2500, "input_length": 1536, "output_length": 500, "hash_ids": [1, 2, 3]})"
      << "\n";
  auto trace = MooncakeWorkload({path, 10, 8, 0.5, 64});
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  ASSERT_EQ(trace->conversations.size(), 2u);
  const std::string& a = trace->conversations[0].user_turns[0];
  const std::string& b = trace->conversations[1].user_turns[0];
  EXPECT_EQ(b.substr(0, a.size()), a);  // the shared blocks are the same text
  EXPECT_GT(b.size(), a.size());
  EXPECT_EQ(trace->conversations[1].max_tokens, 64);
  EXPECT_DOUBLE_EQ(trace->conversations[1].arrival_s, 1.25);
  std::ofstream(path) << R"({"timestamp": 0, "hash_ids": []})"
                      << "\n";
  EXPECT_FALSE(MooncakeWorkload({path, 10, 8, 1, 64}).ok());
}

TEST(Runner, StreamsEveryTurnFromTheStubEndpoint) {
  StubEndpoint stub;
  http::ServerConfig config;
  config.port = 0;
  http::Server server(config, &stub);
  ASSERT_TRUE(server.Listen().ok());
  std::thread serving([&] { server.Run(); });
  RunOptions options;
  options.target = {"127.0.0.1", server.port()};
  options.concurrency = 3;
  const Workload workload = MultiTurnWorkload({4, 3, 20, 5, 7, 1});
  const RunResult run = RunWorkload(workload, options);
  server.Shutdown();
  serving.join();
  ASSERT_EQ(run.records.size(), 12u);
  for (const RequestRecord& r : run.records) {
    EXPECT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(r.output_tokens, 7);
    EXPECT_EQ(r.text_events, 7);
    EXPECT_EQ(r.reply, std::string(" tok") + " tok tok tok tok tok tok");
  }
  EXPECT_EQ(stub.requests(), 12);
  EXPECT_GT(run.client_cpu_s, 0);
}

}  // namespace
}  // namespace k3::loadgen
