# program: e2e_basic
# A conditional breakpoint with gdb's default condition-evaluation auto:
# gdbserver advertises ConditionalBreakpoints+ and evaluates the agent
# bytecode itself, so gdb shows "(target evals)".
target remote @TARGET@
break f if i == 3
continue
print i
print global_counter
info breakpoints
continue
