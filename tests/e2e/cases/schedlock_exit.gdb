# program: e2e_threads
# scheduler-locking on: the one thread resumed exits while the main thread
# stays stopped in read(); the server says no resumed thread is left (N)
# instead of waiting forever, and the program goes on when unlocked.
target remote @TARGET@
break work
continue
delete
set scheduler-locking on
continue
info threads
set scheduler-locking off
thread 1
continue
