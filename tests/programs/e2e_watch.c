/* A global written a few times so a hardware watchpoint triggers. */
int watched = 0;
int unrelated = 0;

void bump(int by)
{
    watched += by;
    unrelated++;
}

int main(void)
{
    for (int i = 1; i <= 4; i++)
        bump(i);
    return watched == 10 ? 0 : 1;
}
