import { render } from "preact"
import { Root } from "./app.tsx"
import "./styles.css"

render(<Root />, document.getElementById("app")!)
