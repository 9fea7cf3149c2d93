# Runs `balances` twice on one state directory: the second run must go on
# from the balances the first one left. -DEXE=<balances> -DWORK=<dir>
file(REMOVE_RECURSE "${WORK}")
function(run_balances expect)
  execute_process(COMMAND ${EXE} --state ${WORK}/state ${ARGN}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message("$ balances ${ARGN}\n${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "balances exited with ${rc}")
  endif()
  foreach(line IN LISTS expect)
    string(FIND "${out}" "${line}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "balances did not print: ${line}")
    endif()
  endforeach()
endfunction()
run_balances("alice +100 -> 100;bob +20 -> 20;alice -30 -> 70;final alice 70"
  alice=+100 bob=+20 alice=-30)
run_balances("alice -50 -> 20;bob +5 -> 25;alice -40 refused: insufficient funds;final alice 20;final bob 25"
  alice=-50 bob=+5 alice=-40)
file(REMOVE_RECURSE "${WORK}")
