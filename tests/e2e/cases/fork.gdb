# program: e2e_fork
# fork and vfork: catch fork and catch vfork stop at them, gdb lets each
# child go after taking its breakpoints out (the children finish normally,
# status 0), the parent stops at its own call to work().
target remote @TARGET@
break work
catch fork
catch vfork
continue
continue
continue
print x
bt
continue
