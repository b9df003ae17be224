# program: e2e_alarm
# A SIGALRM pending while gdb holds the program is delivered at gdb's next
# resume, before what gdb resumed it for: the handler runs first in a
# function gdb calls (count 11, not 1), and a `next` stops in the handler
# at its breakpoint. The event recorder held such a signal until the
# thread's next syscall (gdb's gdb.base/signals.exp).
target remote @TARGET@
break main
continue
break handler if 0
next
next
shell sleep 2
print bump ()
print count
condition 2
next
next
shell sleep 2
next
bt
print count
continue
