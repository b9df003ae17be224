# program: e2e_signal
# A signal with a handler: stop on it, step into the handler, bt inside.
target remote @TARGET@
handle SIGUSR1 stop print
break on_usr1
continue
bt 1
info signals SIGUSR1
continue
bt
print sig
finish
continue
