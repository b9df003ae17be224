# program: e2e_loop
# detach at a breakpoint: the program runs to completion on its own.
target remote @TARGET@
break e2e_loop.c:12
continue
print spins
detach
