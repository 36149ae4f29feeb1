// Plays one round of blackjack: node quickstart.mjs ws://HOST:PORT/[,ws://...] TOKEN
import { Client, CroupierError, croupier, decodeCards } from "@croupier/client";

const [urls, token] = process.argv.slice(2);
const client = new Client({ urls: urls.split(","), token });
const login = await client.connect();                  // LoginResult
console.log(`player ${login.playerId}, wallet ${login.chips} chips`);
const seat = await client.join(croupier.Engine.ENGINE_PERSISTENT, "blackjack", 10);
if (!seat.joined) throw new Error(`already seated at ${seat.snapshot.game}: play or leave it first`);
const me = seat.joined.seat;
client.on("deal", (d) => {                             // one Deal per card; no seat: the dealer's
    const who = !Object.hasOwn(d, "seat") ? "dealer" : d.seat === me ? "you" : `seat ${d.seat}`;
    console.log(`${who}: ${d.count ? "a card face down" : decodeCards("blackjack", d.cards)[0].text}`);
});
client.on("turn", (t) => {
    if (t.seat !== me) return;
    const action = t.minAmount                         // the betting turn: bet the table's minimum
        ? { blackjack: { move: croupier.BlackjackMove.BJ_BET, amount: t.minAmount } }
        : { blackjack: { move: croupier.BlackjackMove.BJ_STAND, hand: t.hand } };  // then stand
    console.log(t.minAmount ? `bet ${t.minAmount}` : "stand");
    client.act(action).catch((e) => console.log(`refused: ${e instanceof CroupierError ? e.codeName : e}`));
});
const end = await new Promise((resolve) => client.on("roundEnd", resolve));
const mine = end.deltas?.find((d) => d.seat === me);
console.log(`round over: ${mine ? (mine.delta > 0 ? "+" : "") + mine.delta : "no bet"} chips`);
await client.leave();
client.close();
