/**
 * A ready app for tests: a login screen (username, masked password, remember-me, SIGN IN) that
 * leads to a home screen with a tap counter and a list whose items open a detail screen.
 */
import { type Scenario, screenRoot, type UiNode } from "./scenario.ts";

export const DEMO_PACKAGE = "com.example.app";
const id = (name: string) => `${DEMO_PACKAGE}:id/${name}`;

export interface DemoState {
  username: string;
  password: string;
  remember: boolean;
  error: string;
  user: string;
  count: number;
  selected: string;
  scroll: number;
}

export const DEMO_ITEMS = ["Apples", "Bread", "Cheese", "Dates", "Eggs", "Figs", "Grapes", "Honey"];
const VISIBLE_ITEMS = 5;
const LAYOUT = { padding: 60, gap: 40, top: 160 };

export const demoScenario: Scenario<DemoState> = {
  package: DEMO_PACKAGE,
  activity: `${DEMO_PACKAGE}.LoginActivity`,
  label: "Example",
  initial: "login",
  state: { username: "", password: "", remember: false, error: "", user: "", count: 0, selected: "", scroll: 0 },
  activities: {
    login: `${DEMO_PACKAGE}.LoginActivity`,
    home: `${DEMO_PACKAGE}.HomeActivity`,
    detail: `${DEMO_PACKAGE}.DetailActivity`,
  },
  screens: {
    login: (s, view) =>
      screenRoot(
        view,
        [
          { className: "android.widget.TextView", resourceId: id("title"), text: "Sign in" },
          { field: "username", resourceId: id("username"), hint: "Username" },
          { field: "password", resourceId: id("password"), hint: "Password", password: true },
          {
            className: "android.widget.CheckBox",
            resourceId: id("remember"),
            text: "Remember me",
            checkable: true,
            checked: s.remember,
            onTap: (c) => void (c.state.remember = !c.state.remember),
          },
          {
            className: "android.widget.Button",
            resourceId: id("sign_in"),
            text: "SIGN IN",
            height: 150,
            onTap: (c) => {
              if (!c.state.username || !c.state.password) {
                c.state.error = "Enter username and password";
                return;
              }
              c.log("LoginActivity", `signed in as ${c.state.username}`);
              c.state.user = c.state.username;
              c.state.error = "";
              c.goto("home", { replace: true });
            },
          },
          { className: "android.widget.TextView", resourceId: id("error"), text: s.error, visible: s.error !== "" },
        ],
        LAYOUT,
      ),
    home: (s, view) =>
      screenRoot(
        view,
        [
          { className: "android.widget.TextView", resourceId: id("welcome"), text: `Welcome, ${s.user}!` },
          {
            className: "android.widget.Button",
            resourceId: id("counter"),
            text: `Taps: ${s.count}`,
            onTap: (c) => void c.state.count++,
          },
          {
            className: "android.widget.ListView",
            resourceId: id("list"),
            scrollable: true,
            height: VISIBLE_ITEMS * 160,
            onScroll: (c, { dy }) => {
              const step = Math.trunc(dy / 160);
              c.state.scroll = Math.max(0, Math.min(DEMO_ITEMS.length - VISIBLE_ITEMS, c.state.scroll + step));
            },
            children: DEMO_ITEMS.slice(s.scroll, s.scroll + VISIBLE_ITEMS).map(
              (item): UiNode<DemoState> => ({
                className: "android.widget.TextView",
                resourceId: id("item"),
                text: item,
                height: 160,
                onTap: (c) => {
                  c.state.selected = item;
                  c.goto("detail");
                },
              }),
            ),
          },
        ],
        LAYOUT,
      ),
    detail: (s, view) =>
      screenRoot(view, [{ className: "android.widget.TextView", resourceId: id("detail"), text: s.selected }], LAYOUT),
  },
};
