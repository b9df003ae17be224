# program: e2e_crash
# SIGSEGV from a NULL write, backtrace, then let the signal kill the program.
target remote @TARGET@
continue
bt
info registers rip
print $_siginfo.si_signo
print $_siginfo._sifields._sigfault.si_addr
continue
