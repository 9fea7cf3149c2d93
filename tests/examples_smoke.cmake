# Smoke-runs each example in CTest (CAF's examples/ habit): one line per example
# at the bottom. An example counts as passing when it exits with 0 *and* prints
# what it must; PASS_REGULAR_EXPRESSION alone ignores the exit code, so an
# example that printed its result and then crashed in shutdown would pass.
# A run that must fail names the exit status it must fail with (EXIT).
#
# Included by tests/CMakeLists.txt this file adds the tests; run as `cmake -P`
# it is the check itself:
#   -DPASS=<regex> [-DEXIT=<status>] -P examples_smoke.cmake -- <exe> <args...>

if(CMAKE_SCRIPT_MODE_FILE)
  include("${CMAKE_CURRENT_LIST_DIR}/script_args.cmake")
  keylane_command_after_dashes(cmd)
  if(NOT cmd)
    message(FATAL_ERROR "usage: cmake -DPASS=<regex> -P examples_smoke.cmake -- <exe> [args...]")
  endif()
  if(NOT DEFINED EXIT)
    set(EXIT 0)
  endif()
  execute_process(COMMAND ${cmd} RESULT_VARIABLE rc
    OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message("${out}")
  if(NOT rc STREQUAL "${EXIT}")
    message(FATAL_ERROR "example failed: '${cmd}' exited with ${rc}, not ${EXIT}")
  endif()
  if(NOT out MATCHES "${PASS}")
    message(FATAL_ERROR "example failed: '${cmd}' printed nothing matching /${PASS}/")
  endif()
  return()
endif()

# Test names with spaces and parentheses need policy CMP0110 (CMake 3.19), which
# CMake reads as it stands at the end of the directory. The project asks for
# 3.16 and include() scopes policies to this file, so defer setting it for the
# whole directory to the directory's end.
if(POLICY CMP0110)
  cmake_language(DEFER CALL cmake_policy SET CMP0110 NEW)
endif()

set(keylane_smoke_script "${CMAKE_CURRENT_LIST_FILE}")

# Adds the test "example: <name>" when the example's target exists: runs the
# target with the arguments after `pass_regex`; it must exit with `exit_status`
# and its output (stdout and stderr) must match `pass_regex`.
function(keylane_smoke_example_exit name target exit_status pass_regex)
  if(NOT TARGET ${target})
    return()
  endif()
  add_test(NAME "example: ${name}"
    COMMAND ${CMAKE_COMMAND} "-DPASS=${pass_regex}" "-DEXIT=${exit_status}"
            -P "${keylane_smoke_script}" -- $<TARGET_FILE:${target}> ${ARGN})
  set_tests_properties("example: ${name}" PROPERTIES LABELS "example" TIMEOUT 300)
endfunction()

# The same, for a run that must succeed (exit status 0).
function(keylane_smoke_example name target pass_regex)
  keylane_smoke_example_exit("${name}" ${target} 0 "${pass_regex}" ${ARGN})
endfunction()

# The JSON members of `ledger --scenario retry` that users' scripts rely on,
# with the scenario's expected values ([{] and [}]: literal braces).
set(keylane_ledger_retry_json
  "\"order_kept\": true, \"parked\": [{]\"acct-9\": 5[}], \"retried\": [{]\"acct-5\": 2[}], \"replayed_in_order\": true, \"as_expected\": true")

#                     test name  target  must print    arguments
keylane_smoke_example(ledger     ledger  "key_lanes"   --json)
keylane_smoke_example("ledger with its config file" ledger "key_lanes"
  --json --config ${PROJECT_SOURCE_DIR}/examples/ledger/ledger.toml)
keylane_smoke_example("ledger retry scenario" ledger "${keylane_ledger_retry_json}"
  --scenario retry --json)
keylane_smoke_example("ledger retry scenario with its config file" ledger
  "${keylane_ledger_retry_json}" --scenario retry --json
  --config ${PROJECT_SOURCE_DIR}/examples/ledger/retry.toml)
keylane_smoke_example("ledger retry scenario in words" ledger
  "result: as expected" --scenario retry)
# The checks are not vacuous: too few attempts for acct-5's two failures park
# it too, and the program says so and fails.
keylane_smoke_example_exit("ledger retry scenario notices too few attempts"
  ledger 1 "\"as_expected\": false.*retry.max_attempts = 2 is too few"
  --scenario retry --json --set retry.max_attempts=2)
keylane_smoke_example_exit("ledger rejects an unknown scenario" ledger 2
  "--scenario must be hot or retry, got 'cold'" --scenario cold)
keylane_smoke_example_exit("ledger rejects a bad --set" ledger 2
  "--set retry.max_attempts=0" --scenario retry --set retry.max_attempts=0)
# A key that is a TOML comment parses to no key at all: a named error, exit 2.
keylane_smoke_example_exit("ledger rejects a --set whose key is a comment"
  ledger 2 "invalid_config: --set #x=1: \"#x\" is not a key" --set "#x=1")

# --serve and SIGHUP, as an operator meets them (tests/ledger_serve.sh):
# started in the background, stopped by SIGTERM or SIGINT with status 0, and
# its edited config file reloaded (the change logged, a broken file refused
# while it keeps serving). CMake cannot background a process, so bash does.
find_program(KEYLANE_BASH bash)
if(TARGET ledger AND KEYLANE_BASH)
  set(keylane_serve_script "${CMAKE_CURRENT_LIST_DIR}/ledger_serve.sh")
  foreach(mode stop interrupt reload)
    set(name_stop "ledger --serve stops cleanly on SIGTERM")
    set(name_interrupt "ledger --serve stops cleanly on SIGINT")
    set(name_reload "ledger --serve reloads its edited config file on SIGHUP")
    add_test(NAME "example: ${name_${mode}}"
      COMMAND ${KEYLANE_BASH} ${keylane_serve_script} ${mode}
              $<TARGET_FILE:ledger>
              ${PROJECT_SOURCE_DIR}/examples/ledger/ledger.toml)
    # The script's exit status is the verdict (it checks every line itself).
    set_tests_properties("example: ${name_${mode}}" PROPERTIES
      LABELS "example" TIMEOUT 300)
  endforeach()
endif()

# The ordered export: the quick run's JSON parses, has every mode and member,
# and no mode put an output out of order (examples/ordered_export/
# smoke_check.cmake); --help works; a bad --set fails with the validation
# message.
if(TARGET ordered_export)
  add_test(NAME "example: ordered_export --quick --json"
    COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:ordered_export>
            -P ${PROJECT_SOURCE_DIR}/examples/ordered_export/smoke_check.cmake)
  set_tests_properties("example: ordered_export --quick --json" PROPERTIES
    LABELS "example" TIMEOUT 300)
endif()
keylane_smoke_example("ordered_export --help" ordered_export
  "--set S.K=V" --help)
keylane_smoke_example_exit("ordered_export rejects a bad --set" ordered_export 2
  "--set runtime.max_active_keys=0: must be >= 1" --quick
  --set runtime.max_active_keys=0)

# The pipeline: exit 0 already means every mode delivered every item once,
# in order, and the stateful stage matched the sequential run; the output
# must name every mode, with the stateful one's mismatches 0.
keylane_smoke_example("pipeline --quick --json" pipeline
  "\"mode\":\"sink_only\".*\"mode\":\"each_stage\".*\"mode\":\"stateful\",[^\n]*\"mismatches\":0}.*\"mode\":\"stateful_unsequenced\""
  --quick --json)
keylane_smoke_example("pipeline --help" pipeline "--set S.K=V" --help)
keylane_smoke_example_exit("pipeline rejects a bad --set" pipeline 2
  "--set runtime.max_active_keys=0: must be >= 1" --quick
  --set runtime.max_active_keys=0)

# The README example (tests/doc_blocks/ runs it and compares its output
# with the README's) logs at start the settings app.toml changes from the
# defaults.
keylane_smoke_example("readme example logs the settings that differ from the defaults"
  readme_example
  "keylane info: settings \\([^)]*app.toml\\) differ from the defaults: runtime.lane_linger_ms = 20, state.store = \"memory\", handler.name = \"balance\"\n"
  ${PROJECT_SOURCE_DIR}/examples/readme/app.toml)

# --print-config: every program that loads a config prints the effective
# settings as TOML (a --set included) and exits 0.
keylane_smoke_example("readme example --print-config" readme_example
  "\\[runtime\\]\n[^[]*lane_linger_ms = 20\n.*\\[state\\]\n[^[]*store = \"memory\""
  ${PROJECT_SOURCE_DIR}/examples/readme/app.toml --print-config)
keylane_smoke_example("ledger --print-config" ledger
  "\\[runtime\\]\nmax_active_keys = 3\n" --print-config
  --set runtime.max_active_keys=3)
keylane_smoke_example("ordered_export --print-config" ordered_export
  "\\[runtime\\]\nmax_active_keys = 3\n" --print-config
  --set runtime.max_active_keys=3)
keylane_smoke_example("pipeline --print-config" pipeline
  "\\[runtime\\]\nmax_active_keys = 3\n.*order = \"global\"" --print-config
  --set runtime.max_active_keys=3)
keylane_smoke_example("exchange --print-config" exchange
  "\\[runtime\\]\nmax_active_keys = 3\n.*order = \"per_key\"" --print-config
  --set runtime.max_active_keys=3)
keylane_smoke_example("kafka_ledger --print-config" kafka_ledger
  "\\[runtime\\]\nmax_active_keys = 3\n.*# \\[kafka\\]: as in" --print-config
  --set runtime.max_active_keys=3)
keylane_smoke_example("keylane_bench --print-config" keylane_bench
  "\\[runtime\\]\nmax_active_keys = 3\n.*key_backlog = 65536" --print-config
  --set runtime.max_active_keys=3)
# The operator tools load the runtime's config too (for its store's path).
keylane_smoke_example("keylane-park --print-config" keylane-park
  "\\[runtime\\]\nmax_active_keys = 3\n.*\\[park\\]\nstore = \"sqlite\"\npath = \"kp.db\"" --print-config
  --set runtime.max_active_keys=3 --set park.store=sqlite --set park.path=kp.db)
keylane_smoke_example("keylane-state --print-config" keylane-state
  "\\[runtime\\]\nmax_active_keys = 3\n.*\\[state\\]\nstore = \"rocksdb\"\npath = \"ks\"" --print-config
  --set runtime.max_active_keys=3 --set state.store=rocksdb --set state.path=ks)
keylane_smoke_example_exit("keylane-state --print-config with a bad --set"
  keylane-state 2 "no_such" --print-config --set runtime.no_such=1)

keylane_smoke_example("transfers between accounts conserve the total"
  transfers "total 2000000 expected 2000000 conserved"
  --accounts 200 --transfers 20000)
# kill -9 drill: children killed at random moments on one RocksDB directory,
# then every account's balance and event count checked. The control runs
# without messaging.exactly_once and must find a transfer lost or doubled.
keylane_smoke_example("transfers survive kill -9, each applied once per side"
  transfers "killed 6\naccounts 200 checked 200 wrong 0 total 200000000 expected 200000000"
  --drill 6 --accounts 200 --debits 2000 --seed 7
  --state ${CMAKE_CURRENT_BINARY_DIR}/transfers-drill)
keylane_smoke_example("transfers drill control: unkept messages are lost or doubled"
  transfers "control: the drill found the loss or double it must find"
  --drill 4 --accounts 200 --debits 2000 --seed 8 --control
  --state ${CMAKE_CURRENT_BINARY_DIR}/transfers-control)

if(TARGET balances)
  add_test(NAME "example: balances keeps its state across a restart"
    COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:balances>
            -DWORK=${CMAKE_CURRENT_BINARY_DIR}/balances-smoke
            -P ${PROJECT_SOURCE_DIR}/examples/balances/smoke_check.cmake)
  set_tests_properties("example: balances keeps its state across a restart"
    PROPERTIES LABELS "example" TIMEOUT 300)
endif()
