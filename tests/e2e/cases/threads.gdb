# program: e2e_threads
# Threads: break in a worker, list, switch, backtrace each.
target remote @TARGET@
break work
continue
info threads
bt
thread 1
bt
thread 2
print id
continue
info threads
thread apply all bt 1
delete
continue
