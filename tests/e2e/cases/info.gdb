# program: e2e_basic
# info locals/args/registers/frame at a breakpoint in a nested call.
target remote @TARGET@
break middle
continue
next
info args
info locals
info registers rip
info registers rsp
info registers eflags
info registers
info frame
p $pc
p $sp
p/x $eflags
info registers rax rbx rcx rdx fs_base gs_base orig_rax
info all-registers
