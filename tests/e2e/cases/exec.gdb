# program: e2e_exec
# The program execs itself: gdb is told of the exec, loads the new program,
# inserts its breakpoints there and stops at main again; catch exec too.
target remote @TARGET@
break main
catch exec
continue
print argc
continue
continue
print argc
continue
