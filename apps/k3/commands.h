// The subcommands of the k3 binary. Each Add*Command registers its flags on the CLI11 app and
// returns the function to run when that subcommand is chosen. Only apps/ parse flags.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace k3::app {

using CommandFn = std::function<int()>;

CommandFn AddTokenizeCommand(CLI::App& app);
CommandFn AddDetokenizeCommand(CLI::App& app);
CommandFn AddBenchTokenizerCommand(CLI::App& bench);
CommandFn AddGenerateCommand(CLI::App& app);
CommandFn AddBenchModelCommand(CLI::App& bench);
CommandFn AddBenchEngineCommand(CLI::App& bench);
CommandFn AddServeCommand(CLI::App& app);
CommandFn AddSampleCommand(CLI::App& app);
CommandFn AddBenchFrontendCommand(CLI::App& bench);
CommandFn AddBenchGrammarCommand(CLI::App& bench);
CommandFn AddBenchServeCommand(CLI::App& bench);
CommandFn AddBenchSoakCommand(CLI::App& bench);
CommandFn AddSweepCommand(CLI::App& app);
CommandFn AddRouteCommand(CLI::App& app);
CommandFn AddVerifyCommand(CLI::App& app);
CommandFn AddRenderCommand(CLI::App& app);
CommandFn AddTrainVocabCommand(CLI::App& app);
// The live router's options on `k3 route` itself (route_serve_command.cc).
CommandFn AddRouteServeOptions(CLI::App& app);

}  // namespace k3::app
