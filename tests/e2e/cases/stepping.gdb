# program: e2e_basic
# step / next / finish / until / advance / stepi / nexti.
target remote @TARGET@
break main
continue
next
next
next
until 53
advance outer
step
step
next
step
finish
finish
stepi
nexti
info line *$pc
until 56
next
continue
