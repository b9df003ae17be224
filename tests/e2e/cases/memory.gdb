# program: e2e_basic
# Disassembly at the pc and raw memory of a buffer.
target remote @TARGET@
break e2e_basic.c:53
continue
x/8i $pc
x/16xb buffer
x/4xw buffer
x/2xg buffer
x/s box.name
x/3dw squares
disassemble leaf
output buffer
echo \n
